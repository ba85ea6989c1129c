import Foundation
import Logging
import Synchronization

/// The audit trail of refused device and operator authentications (every 401 the API and the report answer): who tried, from where, and
/// why it was refused, without flooding the log.
///
/// Each refusal is one warning line, at most `linesPerInterval` lines per interval; past that, refusals are only
/// counted, and one line per interval (written when it ends, and when the server stops) says how many were not
/// written one by one. A flood of bad tokens therefore costs at most `linesPerInterval + 1` lines an interval,
/// and every refusal is still accounted for. The token itself is never logged: at most the first 8 hex digits of
/// its SHA-256, which tell repeated attempts with the same token apart and match the `token_hash` of a device.
final class RefusalAudit: Sendable {
    /// Why a request was refused.
    enum Cause: String, Sendable {
        case missingToken = "no Authorization header"
        case notBearer = "not a bearer token"
        case malformedToken = "an empty or over-long token"
        case unknownToken = "an unknown token"
        case revokedDevice = "the token of a revoked device"
        /// A token sent to the operator report that is no operator's (a device's token, a guess).
        case unknownOperatorToken = "an unknown operator token"
        case revokedOperator = "the token of a revoked operator"
    }

    /// One refused request.
    struct Refusal: Sendable {
        var cause: Cause
        /// The client's address and port, as the socket saw them.
        var client: String
        var method: String
        var path: String
        /// The first 8 hex digits of the token's SHA-256, when a token was sent.
        var tokenDigest: String?
        /// The device whose token it is (a revoked device).
        var deviceID: String?
        /// The operator whose token it is (a revoked operator).
        var operatorName: String? = nil
    }

    private struct Window {
        var start: ContinuousClock.Instant
        var written = 0
        var suppressed = 0
    }

    /// The most lines written per interval (the summary line aside).
    let linesPerInterval: Int
    /// The length of an interval.
    let interval: Duration
    private let logger: Logger
    private let window: Mutex<Window>

    init(logger: Logger, linesPerInterval: Int, interval: Duration = .seconds(60)) {
        self.logger = logger
        self.linesPerInterval = max(0, linesPerInterval)
        self.interval = interval
        window = Mutex(Window(start: .now))
    }

    /// Logs `refusal`, or counts it when this interval's lines are used up.
    func record(_ refusal: Refusal, at now: ContinuousClock.Instant = .now) {
        let (summary, writes) = window.withLock { window -> (Int?, Bool) in
            var summary: Int?
            if now - window.start >= interval {
                summary = window.suppressed > 0 ? window.suppressed : nil
                window = Window(start: now)
            }
            guard window.written < linesPerInterval else {
                window.suppressed += 1
                return (summary, false)
            }
            window.written += 1
            return (summary, true)
        }
        if let summary { logSuppressed(summary) }
        guard writes else { return }
        var metadata: Logger.Metadata = [
            "client": "\(refusal.client)", "request": "\(refusal.method) \(refusal.path)",
        ]
        if let digest = refusal.tokenDigest { metadata["token-sha256"] = "\(digest)…" }
        if let device = refusal.deviceID { metadata["device"] = "\(device)" }
        if let name = refusal.operatorName { metadata["operator"] = "\(name)" }
        logger.warning("refused request (401): \(refusal.cause.rawValue)", metadata: metadata)
    }

    /// Writes the count of refusals not logged one by one, once their interval is over (or at once with
    /// `force`, when the server stops).
    func flush(force: Bool = false, at now: ContinuousClock.Instant = .now) {
        let summary = window.withLock { window -> Int? in
            guard force || now - window.start >= interval else { return nil }
            let suppressed = window.suppressed
            window = Window(start: now)
            return suppressed > 0 ? suppressed : nil
        }
        if let summary { logSuppressed(summary) }
    }

    /// Flushes at the end of every interval until cancelled, then once more.
    func run() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: interval)
            flush()
        }
        flush(force: true)
    }

    private func logSuppressed(_ count: Int) {
        let line =
            "refused requests (401): \(count) more not logged one by one "
            + "(at most \(linesPerInterval) lines per \(interval))"
        logger.warning("\(line)", metadata: ["suppressed": "\(count)"])
    }
}
