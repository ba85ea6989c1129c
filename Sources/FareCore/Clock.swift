import Foundation

/// Where the verifier gets "now" from, so that tests and `--at` can pin the inspection time.
public protocol InspectionClock: Sendable {
    /// The current inspection time.
    func now() -> Date
}

/// The machine's wall clock.
public struct SystemClock: InspectionClock {
    public init() {}
    public func now() -> Date { Date() }
}

/// A clock stopped at one moment.
public struct FixedClock: InspectionClock {
    /// The moment this clock always reports.
    public var instant: Date
    public init(_ instant: Date) { self.instant = instant }
    public func now() -> Date { instant }
}
