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

/// Counts wrong operator tokens, in the login form or as a bearer token, per token, per operator and per client
/// address, and says what each may do next.
///
/// Behind the TLS proxy the docs recommend, every client has the proxy's address: a lock per address would let
/// five wrong tokens lock every operator out. So what locks is the token (its SHA-256, the same guess sent again)
/// and the operator (a revoked operator's token, tried again): after `failuresBeforeLock` failures within
/// `window`, that token or operator is refused without being looked up, for `firstLock`, doubling with every further
/// lock up to `longestLock`. An address with as many failures is only slowed (`pause()`): its next wrong
/// tokens are answered after `pause`, while a right token from it is let in at once. A right token resets nothing
/// (failures only age out). Tokens have 256 random bits, so this is about keeping a guesser's noise out of the
/// database and the log more than about the odds; it mirrors the inspector page's lockout without sharing its
/// code, which belongs to the daemon.
final class OperatorLockout: Sendable {
    /// How many failures lock, and for how long.
    struct Rules: Sendable, Equatable {
        var failuresBeforeLock = 5
        var window: TimeInterval = 15 * 60
        var firstLock: TimeInterval = 60
        var longestLock: TimeInterval = 3600
        /// How long a wrong token from a failing address waits for its answer.
        var pause: TimeInterval = 1
        /// The most answers paused at once; past it a failing address's wrong tokens are answered at once, so that
        /// a flood cannot hold the server's connections.
        var mostPaused = 32
    }

    /// What counts are kept under: a token's digest, an operator's name, a client's address.
    enum Subject: Hashable, Sendable {
        case token([UInt8])
        case account(String)
        case address(String)
    }

    /// What an attempt may do.
    enum Admission: Equatable {
        case admitted
        /// Refused unseen until then.
        case locked(until: Date)
    }

    /// What became of a failure.
    struct Failure: Equatable {
        /// The end of the lock of the token (or operator) that this failure started, if it started one.
        var lockedUntil: Date?
        /// Whether the failure's address had reached the limit before it: its wrong tokens are answered slowly.
        var addressSlowed: Bool
        /// Whether this failure brought the address to the limit (worth one log line).
        var addressStarted: Bool
    }

    private struct Count {
        var failures: [Date] = []
        var lockedUntil: Date?
        var locks = 0
    }

    let rules: Rules
    /// The most tokens, operators and addresses counted; past it, a new one is counted only when old ones have
    /// aged out, so that a flood of made-up tokens neither grows memory nor wipes a real count.
    static let mostSubjects = 20_000
    private let counts = Mutex<[Subject: Count]>([:])
    private let paused = Mutex(0)

    init(rules: Rules = Rules()) {
        self.rules = rules
    }

    /// Whether `subject` (a token or an operator) may be tried now.
    func admit(_ subject: Subject, at now: Date) -> Admission {
        counts.withLock { counts in
            if let until = counts[subject]?.lockedUntil, until > now { return .locked(until: until) }
            return .admitted
        }
    }

    /// Counts a wrong token: under its digest, the operator it names (a revoked one), and the client's address.
    @discardableResult
    func failed(token: [UInt8], account: String?, address: String, at now: Date) -> Failure {
        counts.withLock { counts in
            var lockedUntil: Date?
            for subject in [Subject.token(token)] + (account.map { [Subject.account($0)] } ?? []) {
                if let until = Self.count(subject, in: &counts, rules: rules, at: now) {
                    lockedUntil = max(lockedUntil ?? until, until)
                }
            }
            let wasFailing = counts[.address(address)]?.lockedUntil.map { $0 > now } == true
            _ = Self.count(.address(address), in: &counts, rules: rules, at: now)
            let failing = counts[.address(address)]?.lockedUntil.map { $0 > now } == true
            return Failure(lockedUntil: lockedUntil, addressSlowed: wasFailing, addressStarted: failing && !wasFailing)
        }
    }

    /// Waits `rules.pause` before a failing address's answer, unless `rules.mostPaused` answers wait already.
    func pause() async {
        let admitted = paused.withLock { count in
            guard count < rules.mostPaused else { return false }
            count += 1
            return true
        }
        guard admitted else { return }
        defer { paused.withLock { $0 -= 1 } }
        try? await Task.sleep(for: .seconds(rules.pause))
    }

    /// Adds a failure to `subject`; returns the end of its lock when it is locked (by this failure or before).
    private static func count(
        _ subject: Subject, in counts: inout [Subject: Count], rules: Rules, at now: Date
    ) -> Date? {
        if counts[subject] == nil, counts.count >= mostSubjects {
            counts = counts.filter { entry in
                entry.value.lockedUntil.map { $0 > now } == true
                    || entry.value.failures.contains { now.timeIntervalSince($0) <= rules.window }
            }
            guard counts.count < mostSubjects else { return nil }
        }
        var count = counts[subject] ?? Count()
        if let until = count.lockedUntil, until > now {
            counts[subject] = count
            return until
        }
        count.failures = count.failures.filter { now.timeIntervalSince($0) <= rules.window } + [now]
        var lockEnd: Date?
        if count.failures.count >= rules.failuresBeforeLock {
            let length = min(rules.longestLock, rules.firstLock * pow(2, Double(min(count.locks, 30))))
            lockEnd = now.addingTimeInterval(length)
            count.lockedUntil = lockEnd
            count.locks += 1
            count.failures = []
        }
        counts[subject] = count
        return lockEnd
    }
}
