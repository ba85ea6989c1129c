import Foundation

/// Fails a test that would otherwise hang forever; no test asserts how long anything takes.
public struct TimedOut: Error, CustomStringConvertible {
    public var what: String
    public init(what: String) { self.what = what }
    public var description: String { "gave up waiting for \(what)" }
}

/// Runs `operation`, throwing ``TimedOut`` if it has not finished after `seconds` (a guard against hangs).
public func within<T: Sendable>(
    _ seconds: Double = 10,
    _ what: String,
    _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try await Task.sleep(for: .seconds(seconds))
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let value = first else { throw TimedOut(what: what) }
        return value
    }
}
