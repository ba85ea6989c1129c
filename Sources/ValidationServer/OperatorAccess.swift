import Foundation
import Synchronization

/// The report's open sessions: a random cookie value per login, kept in memory, each naming the operator's token
/// hash so that revoking the operator closes its sessions at the next request.
///
/// Only the SHA-256 of a cookie value is held, as for tokens. Sessions live in this process: a server restarted
/// (or another server sharing the database) asks the operator to log in again, which is cheap for a page read a
/// few times a day and keeps session secrets out of the database.
final class OperatorSessions: Sendable {
    /// One open session.
    struct Session: Sendable, Equatable {
        /// The hash of the token the operator logged in with: the operator is looked up by it at every request.
        var tokenHash: [UInt8]
        /// When the session ends, however busy it is.
        var expiresAt: Date
    }

    /// How long a session lasts from its login: a working day.
    let lifetime: TimeInterval
    /// The most sessions kept; the oldest are dropped past it (a script logging in in a loop must not grow memory).
    static let mostSessions = 10_000
    private let sessions = Mutex<[[UInt8]: Session]>([:])

    init(lifetime: TimeInterval = 8 * 3600) {
        self.lifetime = lifetime
    }

    /// Opens a session for the operator whose token hashes to `tokenHash` and returns the cookie value.
    func open(tokenHash: [UInt8], at now: Date) throws(ServerError) -> (cookie: String, expiresAt: Date) {
        let cookie = try DeviceToken.generate()
        let session = Session(tokenHash: tokenHash, expiresAt: now.addingTimeInterval(lifetime))
        sessions.withLock { sessions in
            sessions = sessions.filter { $0.value.expiresAt > now }
            if sessions.count >= Self.mostSessions,
                let oldest = sessions.min(by: { $0.value.expiresAt < $1.value.expiresAt })
            {
                sessions[oldest.key] = nil
            }
            sessions[DeviceToken.hash(cookie)] = session
        }
        return (cookie, session.expiresAt)
    }

    /// The session a cookie value opens, if it is open and not expired.
    func session(cookie: String, at now: Date) -> Session? {
        let key = DeviceToken.hash(cookie)
        return sessions.withLock { sessions in
            guard let session = sessions[key] else { return nil }
            guard session.expiresAt > now else {
                sessions[key] = nil
                return nil
            }
            return session
        }
    }

    /// Ends a session (logout).
    func close(cookie: String) {
        let key = DeviceToken.hash(cookie)
        _ = sessions.withLock { $0.removeValue(forKey: key) }
    }
}

/// Locks out a client address that keeps sending wrong operator tokens, in the login form or as a bearer token.
///
/// After `failuresBeforeLock` failures within `window`, the address is refused without any token being looked up,
/// for `firstLock`, doubling with every further lock up to `longestLock`. A right token does not reset an
/// address's count (failures only age out), so a guesser holding one operator's token cannot use it to keep
/// guessing another's. Tokens have 256 random bits, so this is about keeping a guesser's noise out of the
/// database and the log more than about the odds; it mirrors the inspector page's lockout without sharing its
/// code, which belongs to the daemon.
final class OperatorLockout: Sendable {
    /// How many failures lock, and for how long.
    struct Rules: Sendable, Equatable {
        var failuresBeforeLock = 5
        var window: TimeInterval = 15 * 60
        var firstLock: TimeInterval = 60
        var longestLock: TimeInterval = 3600
    }

    /// What an attempt from an address may do.
    enum Admission: Equatable {
        case admitted
        /// Refused unseen until then.
        case locked(until: Date)
    }

    private struct Count {
        var failures: [Date] = []
        var lockedUntil: Date?
        var locks = 0
    }

    let rules: Rules
    /// The most addresses counted; past it, a new address is admitted only when old ones have aged out, so that
    /// a flood of addresses neither grows memory nor wipes a real count.
    static let mostAddresses = 20_000
    private let counts = Mutex<[String: Count]>([:])

    init(rules: Rules = Rules()) {
        self.rules = rules
    }

    /// Whether `address` may try a token now.
    func admit(_ address: String, at now: Date) -> Admission {
        counts.withLock { counts in
            if let until = counts[address]?.lockedUntil, until > now { return .locked(until: until) }
            return .admitted
        }
    }

    /// Counts a wrong token from `address`; returns the end of the lock it starts, if it starts one.
    @discardableResult
    func failed(_ address: String, at now: Date) -> Date? {
        counts.withLock { counts in
            if counts[address] == nil, counts.count >= Self.mostAddresses {
                counts = counts.filter { entry in
                    entry.value.lockedUntil.map { $0 > now } == true
                        || entry.value.failures.contains { now.timeIntervalSince($0) <= rules.window }
                }
                guard counts.count < Self.mostAddresses else { return nil }
            }
            var count = counts[address] ?? Count()
            count.failures = count.failures.filter { now.timeIntervalSince($0) <= rules.window } + [now]
            var lockEnd: Date?
            if count.failures.count >= rules.failuresBeforeLock {
                let length = min(rules.longestLock, rules.firstLock * pow(2, Double(min(count.locks, 30))))
                lockEnd = now.addingTimeInterval(length)
                count.lockedUntil = lockEnd
                count.locks += 1
                count.failures = []
            }
            counts[address] = count
            return lockEnd
        }
    }
}
