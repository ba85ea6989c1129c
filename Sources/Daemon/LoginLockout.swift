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

        /// Whether dropping this entry would lose anything that locks: a failure still in the window, a lock (in
        /// force, or one the next lock doubles), an attempt under way.
        func counts(at now: Date, rules: Rules) -> Bool {
            pending > 0 || locks > 0 || lockedUntil.map { $0 > now } == true
                || failures.contains { now.timeIntervalSince($0) <= rules.window }
        }
    }

    let rules: Rules
    private var byStaff = Table()
    private var byAddress = Table()

    /// Entries kept before idle ones are dropped (unknown staff ids and addresses must not grow memory forever).
    static let pruneAbove = 1024

    /// Entries kept at most, per table. Past this, a staff id or address not yet counted is refused (locked) until
    /// room is made: a flood of made-up staff ids or addresses must neither grow memory without bound nor push out
    /// the partial count of a real one (which would give a guesser five more tries).
    static let mostEntries = 20_000

    /// The counts of one kind (staff ids or addresses), and when to look for entries to drop.
    private struct Table {
        var counts: [String: Count] = [:]
        /// The size at which the next pruning runs: twice what the last one kept, so that pruning costs O(1) per
        /// attempt on average.
        var pruneAt = LoginLockout.pruneAbove
        var prunedAt = Date.distantPast

        /// Whether `key` is counted, or can be: when the table is full, a pruning runs (at most once a second) and
        /// a new key is counted only if it made room.
        mutating func makeRoom(for key: String, at now: Date, rules: Rules) -> Bool {
            if counts[key] != nil { return true }
            // A full table of counts that matter is not searched again at every attempt: once a second at most.
            let full = counts.count >= LoginLockout.mostEntries
            if counts.count >= pruneAt, !full || now.timeIntervalSince(prunedAt) >= 1 {
                prune(at: now, rules: rules)
            }
            return counts.count < LoginLockout.mostEntries
        }

        /// Ends an attempt under way for `key` without counting it.
        mutating func settle(_ key: String) {
            guard var count = counts[key] else { return }
            count.pending = max(0, count.pending - 1)
            counts[key] = count
        }

        /// Drops the idle entries; past ``LoginLockout/mostEntries``, also those whose failures have all left the
        /// window. Never an entry with a failure still in the window, a lock or an attempt under way.
        private mutating func prune(at now: Date, rules: Rules) {
            counts = counts.filter { !$0.value.isIdle(at: now, rules: rules) }
            if counts.count >= LoginLockout.mostEntries {
                counts = counts.filter { $0.value.counts(at: now, rules: rules) }
            }
            pruneAt = min(LoginLockout.mostEntries, max(LoginLockout.pruneAbove, 2 * counts.count))
            prunedAt = now
        }
    }

    init(rules: Rules = Rules()) {
        self.rules = rules
    }

    /// How many staff ids and addresses are counted now.
    var entryCount: (staff: Int, addresses: Int) { (byStaff.counts.count, byAddress.counts.count) }

    /// Reserves an attempt for `staff` from `address`, or says until when either is locked.
    mutating func admit(staff: String, address: String, at now: Date) -> Admission {
        let staffRoom = byStaff.makeRoom(for: staff, at: now, rules: rules)
        let addressRoom = byAddress.makeRoom(for: address, at: now, rules: rules)
        guard staffRoom, addressRoom else {
            // Full of counts that still matter: an attempt that could not be counted is not made.
            return .locked(until: now.addingTimeInterval(rules.firstLock))
        }
        var staffCount = byStaff.counts[staff, default: Count()]
        var addressCount = byAddress.counts[address, default: Count()]
        let lockedUntil = [lock(&staffCount, at: now), lock(&addressCount, at: now)].compactMap { $0 }.max()
        if let lockedUntil {
            byStaff.counts[staff] = staffCount
            byAddress.counts[address] = addressCount
            return .locked(until: lockedUntil)
        }
        staffCount.pending += 1
        addressCount.pending += 1
        byStaff.counts[staff] = staffCount
        byAddress.counts[address] = addressCount
        return .admitted
    }

    /// Settles an admitted attempt as a wrong PIN (or unknown staff id).
    mutating func failed(staff: String, address: String, at now: Date) {
        byStaff.counts[staff] = failing(byStaff.counts[staff, default: Count()], at: now)
        byAddress.counts[address] = failing(byAddress.counts[address, default: Count()], at: now)
    }

    /// Settles an admitted attempt as a good login: the staff id's own count starts again; the address's does not.
    mutating func succeeded(staff: String, address: String, at now: Date) {
        byStaff.counts[staff] = Count()
        byAddress.settle(address)
    }

    /// Settles an admitted attempt that could not be checked (the store failed): it counts for nothing.
    mutating func abandoned(staff: String, address: String) {
        byStaff.settle(staff)
        byAddress.settle(address)
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
}
