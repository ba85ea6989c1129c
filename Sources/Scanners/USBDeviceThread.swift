import Foundation
import Synchronization
import SystemCalls
import SystemPackage

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Scans handed from a device thread to the task calling `nextScan()`.
///
/// The device thread never waits for the consumer: scans queue here, so that SNAPI packets are acknowledged
/// and hidraw's 64-report kernel queue is drained however slowly verdicts are handled.
final class ScanMailbox: Sendable {
    private struct State {
        var scans: [ScanEvent] = []
        var ended = false
        var failure: (any Error)?
        var waiter: CheckedContinuation<ScanEvent?, any Error>?
        var waiterID: UInt64 = 0
    }

    private let state = Mutex(State())

    /// Queues a scan, or hands it straight to a waiting `next()`.
    func post(_ scan: ScanEvent) {
        let waiter = state.withLock { state -> CheckedContinuation<ScanEvent?, any Error>? in
            guard !state.ended else { return nil }
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            state.scans.append(scan)
            return nil
        }
        waiter?.resume(returning: scan)
    }

    /// Ends the session after the queued scans: `next()` then returns `nil`, or throws `failure`.
    func finish(failure: (any Error & Sendable)? = nil) {
        let waiter = state.withLock { state -> CheckedContinuation<ScanEvent?, any Error>? in
            guard !state.ended else { return nil }
            state.ended = true
            state.failure = failure
            defer { state.waiter = nil }
            return state.waiter
        }
        if let failure {
            waiter?.resume(throwing: failure)
        } else {
            waiter?.resume(returning: nil)
        }
    }

    /// The next scan; `nil` at a clean end. Throws the session's failure, or `CancellationError`.
    func next() async throws -> ScanEvent? {
        let id = state.withLock { state in
            state.waiterID &+= 1
            return state.waiterID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<ScanEvent?, any Error>) in
                let immediate = state.withLock { state -> Result<ScanEvent?, any Error>? in
                    if !state.scans.isEmpty { return .success(state.scans.removeFirst()) }
                    if state.ended { return state.failure.map { .failure($0) } ?? .success(nil) }
                    if Task.isCancelled { return .failure(CancellationError()) }
                    state.waiter = continuation
                    state.waiterID = id
                    return nil
                }
                if let immediate { continuation.resume(with: immediate) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<ScanEvent?, any Error>? in
                guard state.waiterID == id, let waiter = state.waiter else { return nil }
                state.waiter = nil
                return waiter
            }
            waiter?.resume(throwing: CancellationError())
        }
    }
}

/// Errors of the USB scanner transports, worded for the person who has to fix them.
enum USBNodeError {
    /// The error for a failed `open(2)` of a device node.
    static func opening(_ path: String, _ errno: Errno, what: String) -> ScannerConnectionError {
        switch errno {
        case .noSuchFileOrDirectory, .noSuchAddressOrDevice, .operationNotSupportedByDevice:
            return ScannerConnectionError(
                code: .deviceMissing,
                device: path,
                message: "\(path) does not exist: is the scanner plugged in? "
                    + "`farecheck scanners list` shows what is attached",
                cause: errno
            )
        case .permissionDenied, .notPermitted:
            return ScannerConnectionError(
                code: .permissionDenied,
                device: path,
                message: "no permission to open \(path): install the udev rules in Udev/ (see Udev/README.md) "
                    + "and add this user to the farecheck group",
                cause: errno
            )
        case .resourceBusy:
            return ScannerConnectionError(
                code: .deviceBusy, device: path, message: "\(path) is in use by another program", cause: errno)
        default:
            return ScannerConnectionError(
                code: .openFailed, device: path, message: "cannot open \(path) as \(what)", cause: errno)
        }
    }

    /// The error for a failed read or `poll` of an open node: gone for the errors an unplugged device gives.
    static func reading(_ path: String, _ errno: Errno, dropped: DroppedScan?) -> ScannerConnectionError {
        let gone: Set<Errno> = [.ioError, .operationNotSupportedByDevice, .noSuchAddressOrDevice, .badFileDescriptor]
        return ScannerConnectionError(
            code: gone.contains(errno) ? .deviceGone : .ioFailed,
            device: path,
            message: (gone.contains(errno) ? "the scanner went away" : "reading \(path) failed") + droppedNote(dropped),
            cause: errno
        )
    }

    /// The error for a hang-up or end of file.
    static func hungUp(_ path: String, dropped: DroppedScan?) -> ScannerConnectionError {
        ScannerConnectionError(code: .deviceGone, device: path, message: "the scanner went away" + droppedNote(dropped))
    }

    /// "; a scan in flight was dropped after N bytes", or nothing.
    static func droppedNote(_ dropped: DroppedScan?) -> String {
        guard let dropped else { return "" }
        return "; a scan in flight was dropped after \(dropped.receivedBytes) bytes"
    }
}
