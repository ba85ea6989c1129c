import Foundation

/// The failed-login counts that lock PIN guessing: one count per staff id and one per client address, each
/// locking on its own after ``Rules/failuresBeforeLock`` failures within ``Rules/window``, for a time that doubles
/// with each lock.
///
/// A value, changed only under its owner's lock, in three steps: ``admit(staff:address:at:)`` reserves an attempt
/// before the PIN is checked (so that 60 guesses sent at once cannot all pass a limit of 5 while the first are still
/// being hashed), then ``failed(staff:address:at:)`` or ``succeeded(staff:address:at:)`` settles it. Another
/// account's success resets nothing: a good login resets only the count of its own staff id, and an address's
/// count is never reset by a success (it only ages out), so a known account cannot be used to unlock guessing at
/// another's PIN.
struct LoginLockout: Sendable {
    /// How many failures lock, and for how long.
    struct Rules: Sendable, Equatable {
        /// Failures (within ``window``) that lock a staff id or an address.
        var failuresBeforeLock = 5
        /// How long a failure counts.
        var window: TimeInterval = 15 * 60
        /// The first lock's length; each further lock of the same staff id or address doubles it.
        var firstLock: TimeInterval = 60
        /// The longest lock.
        var longestLock: TimeInterval = 3600
        /// A staff id or address with no failure for this long starts again from the first lock's length.
        var forgetAfter: TimeInterval = 24 * 3600
    }

    /// What an attempt may do.
    enum Admission: Equatable {
        /// The PIN may be checked; the attempt is counted as pending until settled.
        case admitted
        /// Refused without checking: locked until then.
        case locked(until: Date)
    }

    /// One staff id's or address's record.
    private struct Count {
        var failures: [Date] = []
        var pending = 0
        var lockedUntil: Date?
        /// Locks so far (the next one lasts `firstLock · 2^locks`).
        var locks = 0
        var lastFailure: Date?

        func isIdle(at now: Date, rules: Rules) -> Bool {
            guard pending == 0 else { return false }
            if let lockedUntil, lockedUntil > now { return false }
            guard let lastFailure else { return true }
            return now.timeIntervalSince(lastFailure) > rules.forgetAfter
        }
    }

    let rules: Rules
    private var byStaff: [String: Count] = [:]
    private var byAddress: [String: Count] = [:]

    /// Entries kept before idle ones are dropped (unknown staff ids and addresses must not grow memory forever).
    private static let pruneAbove = 1024

    init(rules: Rules = Rules()) {
        self.rules = rules
    }

    /// Reserves an attempt for `staff` from `address`, or says until when either is locked.
    mutating func admit(staff: String, address: String, at now: Date) -> Admission {
        prune(at: now)
        var staffCount = byStaff[staff, default: Count()]
        var addressCount = byAddress[address, default: Count()]
        let lockedUntil = [lock(&staffCount, at: now), lock(&addressCount, at: now)].compactMap { $0 }.max()
        if let lockedUntil {
            byStaff[staff] = staffCount
            byAddress[address] = addressCount
            return .locked(until: lockedUntil)
        }
        staffCount.pending += 1
        addressCount.pending += 1
        byStaff[staff] = staffCount
        byAddress[address] = addressCount
        return .admitted
    }

    /// Settles an admitted attempt as a wrong PIN (or unknown staff id).
    mutating func failed(staff: String, address: String, at now: Date) {
        byStaff[staff] = failing(byStaff[staff, default: Count()], at: now)
        byAddress[address] = failing(byAddress[address, default: Count()], at: now)
    }

    /// Settles an admitted attempt as a good login: the staff id's own count starts again; the address's does not.
    mutating func succeeded(staff: String, address: String, at now: Date) {
        byStaff[staff] = Count()
        byAddress[address, default: Count()].pending = max(0, byAddress[address, default: Count()].pending - 1)
    }

    /// Settles an admitted attempt that could not be checked (the store failed): it counts for nothing.
    mutating func abandoned(staff: String, address: String) {
        byStaff[staff, default: Count()].pending = max(0, byStaff[staff, default: Count()].pending - 1)
        byAddress[address, default: Count()].pending = max(0, byAddress[address, default: Count()].pending - 1)
    }

    /// Until when `count` is locked at `now`, if it is: by a lock, or because failures and attempts under way
    /// already reach the limit. Ages the count first.
    private func lock(_ count: inout Count, at now: Date) -> Date? {
        count.failures.removeAll { now.timeIntervalSince($0) > rules.window }
        if let lastFailure = count.lastFailure, now.timeIntervalSince(lastFailure) > rules.forgetAfter {
            count.locks = 0
        }
        if let lockedUntil = count.lockedUntil {
            if lockedUntil > now { return lockedUntil }
            count.lockedUntil = nil
        }
        if count.failures.count + count.pending >= rules.failuresBeforeLock {
            // Attempts under way would reach the limit if they fail: wait for them (a second at most).
            return now.addingTimeInterval(1)
        }
        return nil
    }

    private func failing(_ count: Count, at now: Date) -> Count {
        var count = count
        count.pending = max(0, count.pending - 1)
        count.failures.append(now)
        count.lastFailure = now
        if count.failures.count >= rules.failuresBeforeLock {
            count.lockedUntil = now.addingTimeInterval(lockLength(after: count.locks))
            count.locks += 1
            count.failures.removeAll()
        }
        return count
    }

    /// The length of the lock that follows `locks` earlier ones.
    func lockLength(after locks: Int) -> TimeInterval {
        min(rules.longestLock, rules.firstLock * pow(2, Double(min(locks, 20))))
    }

    /// Entries kept at most: past this, only locked ones and attempts under way are kept (a flood from many
    /// addresses or of made-up staff ids then costs the flooder its partial counts, never the daemon its memory).
    private static let mostEntries = 20_000

    private mutating func prune(at now: Date) {
        for table in [\Self.byStaff, \Self.byAddress] {
            guard self[keyPath: table].count > Self.pruneAbove else { continue }
            self[keyPath: table] = self[keyPath: table].filter { !$0.value.isIdle(at: now, rules: rules) }
            if self[keyPath: table].count > Self.mostEntries {
                self[keyPath: table] = self[keyPath: table].filter { entry in
                    entry.value.pending > 0 || (entry.value.lockedUntil.map { $0 > now } ?? false)
                }
            }
        }
    }
}
