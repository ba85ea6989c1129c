import Synchronization

/// Tables made once for a key that keeps being used, with which its signatures are checked faster than OpenSSL
/// checks them: `DSAFixedBase` (powers of g and y), `P256FixedBase` (multiples of an ECDSA P-256 key's point).
///
/// This is the entry to `Signatures/Arithmetic`, the module's own signature checks beside OpenSSL's (its README.md
/// says the same at length, with every test named):
///
/// - **What and why.** `P256Arithmetic.swift` is our own P-256 arithmetic: the field mod p and the scalars mod n on
///   four 64-bit limbs in Montgomery form, points, and tables of a point's multiples; `P256FixedBase` checks ECDSA
///   P-256 with a table of the key's point and one of G. `DSAFixedBase` checks DSA with tables of the powers of g and
///   y, its multiplications being OpenSSL's `BN_mod_mul_montgomery`. OpenSSL recomputes what belongs to the key at
///   every check: with the tables a P-256 check takes 21–29 µs beside 74–93 µs for `ECDSA_do_verify` on the same
///   key, and the DSA verdicts run at 181–238 % of OpenSSL's pace on the same key shapes (docs/benchmarks.md).
/// - **What is held to OpenSSL, and how.** `P256FixedBaseTests` holds the field and scalar arithmetic to
///   `BN_mod_mul`, `BN_mod_sqr`, `BN_mod_add`, `BN_mod_sub` and `BN_mod_inverse` on 3 000 seeded pairs per modulus,
///   many near an edge, the curve's constants and k · G to OpenSSL's prime256v1 and `EC_POINT_mul`, and every check
///   to `PublicKey.isValidSignatureThroughOpenSSL` (OpenSSL's `EVP_PKEY_verify` on the same key): genuine and
///   altered signatures under four digests, r and s out of range, R's x at or above n, sums meeting infinity.
///   `DSAFixedBaseTests` holds the DSA checks to OpenSSL's on genuine and altered signatures for DSA-1024/160,
///   2048/224 and 2048/256, and asserts r and s out of range invalid. No fixed vectors (NIST, Wycheproof) are run.
/// - **Not constant-time, and why that is acceptable.** A check computes only on public data (the public key, the
///   signature, the digest of a message the barcode carries): zero digits are skipped, tables are indexed by the
///   scalars, exceptional points branch. No private key reaches these files; signing is OpenSSL's (`PrivateKey`).
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
