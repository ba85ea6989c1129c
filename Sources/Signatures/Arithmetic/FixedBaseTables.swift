import Synchronization

/// Tables made once for a key that keeps being used, with which its signatures are checked faster than OpenSSL
/// checks them: `DSAFixedBase` (powers of g and y), `P256FixedBase` (multiples of an ECDSA P-256 key's point).
protocol FixedBaseTables: AnyObject, Sendable {
    /// How many checks with one key before its tables are made: a key seen a few times (a test, a one-off import)
    /// does not pay for them.
    static var tableUse: Int { get }

    /// The tables for `pkey`, or `nil` when they would not serve it (another kind or size of key), the memory
    /// budget (`FixedBaseBudget`) is spent, or making them fails; the key is then checked by OpenSSL.
    init?(pkey: OpaquePointer)
}

/// The memory all keys' tables take together, DSA and ECDSA alike: a key's tables reserve their size before they are
/// made and return it when the key goes. Past the limit a key is checked by OpenSSL, as before.
enum FixedBaseBudget {
    /// The most all keys' tables may take: about 100 DSA-1024 keys, 30 DSA-2048 ones or 30 P-256 ones, many times
    /// the keys an inspector meets in a day.
    static let limit = 16 << 20

    private static let bytesInUse = Atomic<Int>(0)

    /// Takes `bytes` from the budget; `false` (nothing taken) when they would go past the limit.
    static func reserve(_ bytes: Int) -> Bool {
        var current = bytesInUse.load(ordering: .relaxed)
        while current + bytes <= limit {
            let (exchanged, original) = bytesInUse.compareExchange(
                expected: current, desired: current + bytes, ordering: .relaxed)
            if exchanged { return true }
            current = original
        }
        return false
    }

    /// Gives back what `reserve` took.
    static func release(_ bytes: Int) {
        bytesInUse.subtract(bytes, ordering: .relaxed)
    }
}

/// Where a key stands with its tables: still counting its checks, its tables made, or none to be made (not a key
/// they serve, or the memory budget was spent when it came to them).
enum FixedBaseTableState<Tables: FixedBaseTables>: Sendable {
    case counting(Int)
    case made(Tables)
    case none

    /// The tables to check with, counting this check: made at the `Tables.tableUse`-th.
    mutating func tablesForCheck(pkey: OpaquePointer) -> Tables? {
        switch self {
        case .made(let tables):
            return tables
        case .none:
            return nil
        case .counting(let checks):
            guard checks + 1 >= Tables.tableUse else {
                self = .counting(checks + 1)
                return nil
            }
            let tables = Tables(pkey: pkey)
            self = tables.map(FixedBaseTableState.made) ?? .none
            return tables
        }
    }

    /// Whether the tables are made (for the tests).
    var isMade: Bool {
        if case .made = self { true } else { false }
    }
}
