import FareCore
import Foundation
import Synchronization
import TrustStore

/// Who is inspecting on this handheld: the login that every inspection records.
///
/// In inspector mode scans are refused until someone logs in, with a staff id and PIN checked against the
/// salted hash in the store, or by scanning a signed staff badge (an FC1 ticket of product `staff-badge`
/// whose holder is the staff id). A session ends at logout or after ``timeout`` without a scan.
public final class InspectorSessions: Sendable {
    /// The inspector logged in.
    public struct Session: Sendable, Equatable, Codable {
        public var staffID: String
        public var name: String?
        /// `pin` or `badge`.
        public var method: String
        public var since: Date
        public var lastActivity: Date
    }

    /// Why a login was refused; the message is safe to show (it does not tell which part was wrong).
    public struct LoginError: Error, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }

    /// The product name of a staff badge.
    public static let badgeProduct = "staff-badge"

    private struct State {
        var session: Session?
        var failures: [Date] = []
    }

    private let store: TrustStore
    private let state = Mutex(State())
    /// Whether scans need a session (inspector mode).
    public let isRequired: Bool
    /// Idle time after which a session ends.
    public let timeout: TimeInterval
    /// Failed logins allowed per minute before further attempts are refused for a minute.
    public let maxFailuresPerMinute = 5

    public init(store: TrustStore, isRequired: Bool, timeout: TimeInterval = 8 * 3600) {
        self.store = store
        self.isRequired = isRequired
        self.timeout = timeout
    }

    /// The current session, if one is open and not timed out at `now`.
    public func current(at now: Date = Date()) -> Session? {
        state.withLock { state in
            if let session = state.session, now.timeIntervalSince(session.lastActivity) > timeout {
                state.session = nil
            }
            return state.session
        }
    }

    /// Logs in with a staff id and PIN; replaces any open session.
    @discardableResult
    public func login(staffID: String, pin: String, at now: Date = Date()) throws(LoginError) -> Session {
        let throttled = state.withLock { state in
            state.failures.removeAll { now.timeIntervalSince($0) > 60 }
            return state.failures.count >= maxFailuresPerMinute
        }
        if throttled { throw LoginError(message: "Too many failed logins; wait a minute and try again.") }
        let record: StaffRecord?
        do {
            record = try store.staff(withID: staffID)
        } catch {
            throw LoginError(message: "The staff list cannot be read: \(error.message)")
        }
        guard let record, record.pin.matches(pin) else {
            state.withLock { $0.failures.append(now) }
            throw LoginError(message: "Unknown staff id or wrong PIN.")
        }
        return open(Session(staffID: record.staffID, name: record.name, method: "pin", since: now, lastActivity: now))
    }

    /// Logs in from a scanned staff badge: a valid verdict for a ticket of product `staff-badge`.
    /// Returns `nil` (and changes nothing) for anything else.
    public func login(badge verdict: Verdict) -> Session? {
        guard Self.isBadge(verdict), verdict.isValid, let staffID = verdict.ticket?.holder, !staffID.isEmpty else {
            return nil
        }
        let name = try? store.staff(withID: staffID)?.name
        let now = verdict.inspectedAt
        return open(Session(staffID: staffID, name: name ?? nil, method: "badge", since: now, lastActivity: now))
    }

    /// Whether the verdict is for a staff badge rather than a passenger's ticket.
    public static func isBadge(_ verdict: Verdict) -> Bool {
        verdict.ticket?.product == badgeProduct
    }

    /// Ends the session.
    public func logout() {
        state.withLock { $0.session = nil }
    }

    /// Notes a scan by the logged-in inspector, keeping the session alive; returns the session.
    public func touch(at now: Date = Date()) -> Session? {
        state.withLock { state in
            guard var session = state.session else { return nil }
            if now.timeIntervalSince(session.lastActivity) > timeout {
                state.session = nil
                return nil
            }
            session.lastActivity = now
            state.session = session
            return session
        }
    }

    private func open(_ session: Session) -> Session {
        state.withLock {
            $0.session = session
            $0.failures.removeAll()
        }
        return session
    }
}
