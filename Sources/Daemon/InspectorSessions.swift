import Executors
import FareCore
import Foundation
import Signatures
import Synchronization
import TrustStore

/// Who is inspecting on this handheld, and which page clients act for them.
///
/// In inspector mode scans are refused until someone logs in, with a staff id and PIN checked against the hash in
/// the store, or by scanning a staff badge (an FC1 ticket of product `staff-badge`, signed by a key trusted for
/// staff badges, whose holder is a staff id in the staff list). That is the handheld's inspector session, which
/// every inspection records; it ends at logout, after ``timeout`` without a scan, or when the inspector is removed
/// from the staff list.
///
/// A PIN login from the page also gives that client a session token (the page keeps it in a cookie): the event
/// stream, `/session` and `/logout` answer only to a token bound to the open session, so a client that merely
/// reaches the port can neither read verdicts with holder data nor log the inspector out. A badge scan proves
/// presence at the scanner, not at a browser: it binds no client, and the page asks for the PIN to show verdicts.
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

    /// Why a login was refused. The message is safe to show: it never tells which part was wrong.
    public struct LoginError: Error, CustomStringConvertible {
        /// What happened, for the audit log (never shown: it would tell an unknown id from a wrong PIN).
        public enum Cause: String, Sendable {
            case unknownStaff = "unknown-staff-id"
            case wrongPIN = "wrong-pin"
            case locked = "locked"
            /// The hash was made with a PIN secret this daemon does not have.
            case secretUnavailable = "pin-secret-unavailable"
            case storeFailed = "store-failed"
        }

        public var cause: Cause
        public var message: String
        /// When refused for a lock: seconds until another attempt may be made.
        public var retryAfter: Int?
        public var description: String { message }
    }

    /// What a good PIN login gives the client.
    public struct Login: Sendable {
        public var session: Session
        /// The client's session token (random, 256 bits), for its cookie.
        public var token: String
        /// The PIN is shorter than the configured minimum: the inspector should be given a longer one.
        public var pinTooShort: Bool
        /// The stored hash was replaced by the current kind (scrypt over the secret).
        public var upgraded: Bool
    }

    /// The product name of a staff badge.
    public static let badgeProduct = "staff-badge"

    /// How the daemon checks PINs.
    public struct PINPolicy: Sendable {
        /// The secret mixed into every hash, or `nil` when none is configured.
        public var secret: PINSecret?
        /// The scrypt parameters of new and upgraded hashes.
        public var parameters: PINHash.Parameters
        /// PINs shorter than this still log in (the hash cannot tell), but the login warns.
        public var minimumLength: Int

        public init(secret: PINSecret? = nil, parameters: PINHash.Parameters = .standard, minimumLength: Int = 6) {
            self.secret = secret
            self.parameters = parameters
            self.minimumLength = minimumLength
        }
    }

    private struct State {
        var session: Session?
        /// Tells sessions apart: a token is valid only for the session it was given in.
        var sessionNumber = 0
        var tokens: [String: Int] = [:]
        var lockout: LoginLockout
        /// When the logged-in inspector was last found in the staff list (see `confirmListed`).
        var listedCheck: (number: Int, at: Date)?
    }

    private let store: TrustStore
    private let state: Mutex<State>
    /// Called whenever a session ends (logout, timeout, removal, another login), outside the state's lock: open
    /// event streams end at once rather than at their next look.
    private let endObservers = Mutex<(next: Int, handlers: [Int: @Sendable () -> Void])>((0, [:]))
    /// PIN derivations run one at a time, off the concurrency pool: each takes 32 MiB and tens of milliseconds.
    private let derivations = BlockingQueue(label: "farecheck.pin-derivation")
    private let derivationCount = Mutex(0)
    /// The hash checked for a staff id that is not in the list, so that an unknown id costs the same derivation as
    /// a known one (no telling staff ids apart by the time a refusal takes).
    private let decoy: PINHash?
    /// Whether scans need a session (inspector mode).
    public let isRequired: Bool
    /// Idle time after which a session ends.
    public let timeout: TimeInterval
    public let pinPolicy: PINPolicy

    /// Sessions over the staff list in `store`.
    ///
    /// - Parameters:
    ///   - isRequired: Whether scans need a session (inspector mode).
    ///   - timeout: Idle seconds after which a session ends.
    ///   - pinPolicy: The PIN secret, the scrypt parameters of new hashes, the minimum PIN length.
    ///   - lockoutRules: When failed logins lock a staff id or a client address.
    public init(
        store: TrustStore, isRequired: Bool, timeout: TimeInterval = 8 * 3600, pinPolicy: PINPolicy = PINPolicy(),
        lockoutRules: LoginLockoutRules = LoginLockoutRules()
    ) {
        self.store = store
        self.isRequired = isRequired
        self.timeout = timeout
        self.pinPolicy = pinPolicy
        state = Mutex(State(lockout: LoginLockout(rules: lockoutRules.rules)))
        let random = (try? PINHash.randomBytes(16))?.map { String($0) }.joined() ?? "decoy"
        decoy = try? PINHash(pin: random, secret: pinPolicy.secret, parameters: pinPolicy.parameters)
    }

    /// How many PIN derivations (scrypt or PBKDF2) login attempts have run, for `/metrics`.
    public var pinDerivations: Int { derivationCount.withLock { $0 } }

    // MARK: The handheld's session

    /// The current session, if one is open, not timed out at `now`, and its inspector still in the staff list.
    public func current(at now: Date = Date()) -> Session? {
        let open = withState { state -> (Session, Int)? in
            if let session = state.session, now.timeIntervalSince(session.lastActivity) > timeout {
                Self.end(&state)
            }
            return state.session.map { ($0, state.sessionNumber) }
        }
        guard let (session, number) = open else { return nil }
        return confirmListed(session, number: number, at: now) ? session : nil
    }

    /// Notes a scan by the logged-in inspector, keeping the session alive; returns the session.
    public func touch(at now: Date = Date()) -> Session? {
        let open = withState { state -> (Session, Int)? in
            guard var session = state.session else { return nil }
            if now.timeIntervalSince(session.lastActivity) > timeout {
                Self.end(&state)
                return nil
            }
            session.lastActivity = now
            state.session = session
            return (session, state.sessionNumber)
        }
        guard let (session, number) = open else { return nil }
        return confirmListed(session, number: number, at: now) ? session : nil
    }

    /// Ends the session (and every client's token with it).
    public func logout() {
        withState { Self.end(&$0) }
    }

    // MARK: Clients

    /// The session a client's token belongs to, if that session is still the open one.
    public func session(forToken token: String?, at now: Date = Date()) -> Session? {
        guard let token, !token.isEmpty else { return nil }
        let bound = withState { state in state.tokens[token] == state.sessionNumber }
        guard bound, let session = current(at: now) else { return nil }
        // The session may have changed between the two looks: the token must still be bound to this one.
        return withState { $0.tokens[token] == $0.sessionNumber } ? session : nil
    }

    /// Logs out the session `token` belongs to; returns the session ended, or `nil` (nothing changed) when the
    /// token is not bound to the open session.
    public func logout(token: String?, at now: Date = Date()) -> Session? {
        guard let token, let session = session(forToken: token, at: now) else { return nil }
        withState { state in
            if state.tokens[token] == state.sessionNumber { Self.end(&state) }
        }
        return session
    }

    // MARK: Logins

    /// Logs in with a staff id and PIN from a client at `address`: checks the lockout, derives the PIN's hash (or a
    /// decoy's, for an unknown id), and on success opens (or joins) the session and binds a new token to it.
    public func login(staffID: String, pin: String, address: String, at now: Date = Date()) async throws(LoginError)
        -> Login
    {
        let started = ContinuousClock.now
        let admission = withState { $0.lockout.admit(staff: staffID, address: address, at: now) }
        if case .locked(let until) = admission {
            let seconds = max(1, Int(until.timeIntervalSince(now).rounded(.up)))
            throw LoginError(
                cause: .locked, message: "Too many failed logins; try again in \(Self.describe(seconds)).",
                retryAfter: seconds)
        }
        let record: StaffRecord?
        do {
            record = try store.staff(withID: staffID)
        } catch {
            withState { $0.lockout.abandoned(staff: staffID, address: address) }
            throw LoginError(cause: .storeFailed, message: "The staff list cannot be read: \(error.message)")
        }
        let secret = pinPolicy.secret
        let hash = record?.pin ?? decoy
        let check = await derive { hash?.check(pin, secret: secret) ?? .mismatch }
        // What follows happens when the check is done: a failure counts, and a lock runs, from then (a slow
        // derivation does not shorten a lock), and a session begins then (it is not born idle).
        func currentTime() -> Date {
            let time = started.duration(to: .now).components
            return now.addingTimeInterval(Double(time.seconds) + Double(time.attoseconds) / 1e18)
        }
        let settled = currentTime()
        guard let record, check == .match else {
            withState { $0.lockout.failed(staff: staffID, address: address, at: settled) }
            let cause: LoginError.Cause =
                record == nil ? .unknownStaff : check == .secretUnavailable ? .secretUnavailable : .wrongPIN
            throw LoginError(cause: cause, message: "Unknown staff id or wrong PIN.")
        }
        withState { $0.lockout.succeeded(staff: staffID, address: address, at: now) }
        var upgraded = false
        if record.pin.needsUpgrade(to: pinPolicy.parameters, secret: secret) {
            let parameters = pinPolicy.parameters
            if let fresh = await derive({ try? PINHash(pin: pin, secret: secret, parameters: parameters) }) {
                upgraded = (try? store.upgradePIN(ofStaff: record.staffID, from: record.pin, to: fresh)) ?? false
            }
        }
        let token = Self.newToken()
        let opened = currentTime()
        let session = withState { state -> Session in
            if var open = state.session, open.staffID == record.staffID,
                opened.timeIntervalSince(open.lastActivity) <= timeout
            {
                // The same inspector from a second client (or again): one session, one more token.
                open.lastActivity = opened
                state.session = open
            } else {
                Self.end(&state)
                state.session = Session(
                    staffID: record.staffID, name: record.name, method: "pin", since: opened, lastActivity: opened)
            }
            state.tokens[token] = state.sessionNumber
            return state.session!
        }
        return Login(
            session: session, token: token, pinTooShort: pin.count < pinPolicy.minimumLength, upgraded: upgraded)
    }

    /// Logs in from a scanned staff badge: a valid verdict (so signed by a key trusted for staff badges, see
    /// `KeyPurposePolicy`) for a ticket of product `staff-badge` whose holder is a staff id in the staff list.
    /// Returns `nil` (and changes nothing) for anything else.
    public func login(badge verdict: Verdict) -> Session? {
        guard Self.isBadge(verdict), verdict.isValid, let staffID = verdict.ticket?.holder, !staffID.isEmpty,
            let record = try? store.staff(withID: staffID)
        else {
            return nil
        }
        let now = verdict.inspectedAt
        return withState { state in
            if var open = state.session, open.staffID == record.staffID {
                open.lastActivity = now
                state.session = open
                return open
            }
            Self.end(&state)
            let session = Session(
                staffID: record.staffID, name: record.name, method: "badge", since: now, lastActivity: now)
            state.session = session
            return session
        }
    }

    /// Whether the verdict is for a staff badge rather than a passenger's ticket.
    public static func isBadge(_ verdict: Verdict) -> Bool {
        verdict.ticket?.product == badgeProduct
    }

    // MARK: Internals

    /// Runs `body` under the state's lock; when it ended a session, tells the observers afterwards.
    private func withState<T: Sendable>(_ body: (inout State) -> T) -> T {
        let (result, ended) = state.withLock { state -> (T, Bool) in
            let number = state.sessionNumber
            let result = body(&state)
            return (result, state.sessionNumber != number)
        }
        if ended {
            for handler in endObservers.withLock({ Array($0.handlers.values) }) { handler() }
        }
        return result
    }

    /// Calls `handler` each time a session ends, until ``removeSessionEndObserver(_:)``; returns the registration.
    func onSessionEnd(_ handler: @escaping @Sendable () -> Void) -> Int {
        endObservers.withLock { observers in
            defer { observers.next += 1 }
            observers.handlers[observers.next] = handler
            return observers.next
        }
    }

    /// Stops calling the handler registered as `registration`.
    func removeSessionEndObserver(_ registration: Int) {
        endObservers.withLock { _ = $0.handlers.removeValue(forKey: registration) }
    }

    /// Ends the open session: its tokens stop working, and the next session gets a new number.
    private static func end(_ state: inout State) {
        state.session = nil
        state.tokens.removeAll()
        state.sessionNumber += 1
        state.listedCheck = nil
    }

    /// Whether the session's inspector is still in the staff list, looked up at most once a second; a removed
    /// inspector's session ends here. A store that cannot be read keeps the session (a removal is not assumed).
    private func confirmListed(_ session: Session, number: Int, at now: Date) -> Bool {
        let due = withState { state in
            guard let check = state.listedCheck, check.number == number else { return true }
            return abs(now.timeIntervalSince(check.at)) >= 1
        }
        guard due else { return true }
        let listed: Bool
        do {
            listed = try store.staff(withID: session.staffID) != nil
        } catch {
            return true
        }
        return withState { state in
            guard state.sessionNumber == number else { return state.session != nil }
            if listed {
                state.listedCheck = (number, now)
            } else {
                Self.end(&state)
            }
            return listed
        }
    }

    /// Runs a PIN derivation on the derivation queue, counting it.
    private func derive<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        derivationCount.withLock { $0 += 1 }
        return await derivations.run(work)
    }

    private static func newToken() -> String {
        let bytes = (try? PINHash.randomBytes(32)) ?? (0..<32).map { _ in UInt8.random(in: 0...255) }
        return Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    private static func describe(_ seconds: Int) -> String {
        seconds < 120 ? "\(seconds) s" : "\((seconds + 59) / 60) min"
    }
}

/// The lockout's rules, as the configuration sets them (see `LoginLockout`).
public struct LoginLockoutRules: Sendable, Equatable {
    var rules: LoginLockout.Rules

    /// - Parameters:
    ///   - failuresBeforeLock: Failures within `window` that lock a staff id or a client address.
    ///   - window: Seconds a failure counts.
    ///   - firstLock: Seconds of the first lock; each further one doubles, up to `longestLock`.
    public init(
        failuresBeforeLock: Int = 5, window: TimeInterval = 900, firstLock: TimeInterval = 60,
        longestLock: TimeInterval = 3600
    ) {
        rules = LoginLockout.Rules(
            failuresBeforeLock: failuresBeforeLock, window: window, firstLock: firstLock, longestLock: longestLock)
    }
}
