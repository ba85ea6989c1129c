import COpenSSL

/// ECDSA P-256 verification with tables of multiples of the key's point Q and of the generator G, for keys from
/// trust data, which check signature after signature.
///
/// A check computes R = u1 · G + u2 · Q and compares R's x, reduced mod n, with r. OpenSSL's P-256 code (assembly,
/// `ecp_nistz256`) has a table for G but computes u2 · Q afresh at every check: about 255 point doublings and 50
/// additions, on `BIGNUM`s converted in and out. Q belongs to the key, so its multiples d · 2^(8i) · Q (d from 1 to
/// 255, one row i per byte of a scalar) can be computed once: then u2 · Q is one mixed point addition per non-zero
/// byte of u2, at most 32, and no doubling. G's table is the same, made once for the process. A check is then at
/// most 64 additions, an inversion mod n (about 9 µs of the whole) and a few multiplications, all in Swift on
/// 4 × 64-bit limbs (`P256`), with no allocation.
///
/// Measured on the project's 2-core AMD EPYC VM (release build, other builds running beside it): the check itself
/// takes 24 µs (21–29 over 14 runs) beside 85 µs (74–93) for OpenSSL's `ECDSA_do_verify` on the same key; through
/// `PublicKey.isValidSignature`, SHA-256 of 150 bytes included, 34 000 checks a second beside 10 400 for `openssl
/// speed ecdsap256` (3.3 times; 11 900 before, through `ECDSA_do_verify`). A table takes 510 KiB and 3.7 ms
/// (3.2–4.9) to make, as long as 45 of OpenSSL's checks, so it is made only for a key that keeps being used
/// (`PublicKey` makes it at the key's `tableUse`-th check), and all keys' tables together stay under
/// `FixedBaseBudget.limit`. G's table, 510 KiB more, is made with the first key's and kept for the process, outside
/// the budget (which bounds what grows with the keys).
///
/// Everything here is public data (a key, a signature, a digest): no constant-time arithmetic is needed.
final class P256FixedBase: FixedBaseTables {
    /// d · 2^(8i) · Q for the key's point Q.
    private let keyTable: P256.Table

    /// The same for the generator: made once (Swift initialises a static `let` once, on first use, whichever thread
    /// comes first), when the first key's tables are made.
    static let generatorTable = P256.Table(.generator)

    /// How many checks with one key before its table is made. A check without the table costs about 60 µs more than
    /// with it, and making the table 3.7 ms: by its 64th check a key has lost about what the table costs, so whatever
    /// its later use, it never costs more than twice the best choice made knowing that use in advance. A key checked
    /// a few times (a test, a rarely met issuer) takes neither the time nor the memory.
    static let tableUse = 64

    /// Bytes a key's table takes from `FixedBaseBudget`.
    private static let tableBytes = P256.Table.byteCount

    /// The table for the ECDSA key `pkey`, or `nil` when it is not a P-256 key (OpenSSL checks other curves), its
    /// point is not on the curve, or the memory budget is spent.
    init?(pkey: OpaquePointer) {
        guard KeyFamily.describe(pkey).0 == .ecP256,
            let x = Self.coordinate(OSSL_PKEY_PARAM_EC_PUB_X, of: pkey),
            let y = Self.coordinate(OSSL_PKEY_PARAM_EC_PUB_Y, of: pkey)
        else { return nil }
        // OpenSSL checked the point when it read the key; checked again, as a wrong table would accept forgeries.
        let point = P256.AffinePoint(x: x, y: y)
        guard point.isOnCurve, Self.generatorTable != nil, FixedBaseBudget.reserve(Self.tableBytes) else { return nil }
        guard let keyTable = P256.Table(point) else {
            FixedBaseBudget.release(Self.tableBytes)
            return nil
        }
        self.keyTable = keyTable
    }

    deinit {
        FixedBaseBudget.release(Self.tableBytes)
    }

    /// Whether (r, s) is a valid signature over `digest`, as OpenSSL's ECDSA check decides it: 0 < r, s < n; the
    /// number signed is the digest's leftmost 256 bits (the whole digest when it is shorter, as SHA-1's 160 bits);
    /// valid when R = (e · s⁻¹) · G + (r · s⁻¹) · Q is not infinity and its x, reduced mod n, is r.
    ///
    /// - Parameters:
    ///   - r: r as an unsigned big-endian magnitude; leading zeros allowed, any length.
    ///   - s: s, the same.
    func isValid(r: ArraySlice<UInt8>, s: ArraySlice<UInt8>, digest: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let r = P256.Limbs(bigEndian: r), let s = P256.Limbs(bigEndian: s), !r.isZero, !s.isZero,
            r.isLess(than: P256.n), s.isLess(than: P256.n),
            let generatorTable = Self.generatorTable,
            var e = P256.Limbs(bigEndian: digest.prefix(32))
        else { return false }
        // e < 2^256 < 2n: one subtraction reduces it.
        if !e.isLess(than: P256.n) { e = e.subtracting(P256.n).difference }
        // s⁻¹ in Montgomery form; a Montgomery product with it gives e · s⁻¹ and r · s⁻¹ in plain form.
        let w = P256.Scalar(s).inverse
        let u1 = P256.Scalar(montgomery: e) * w
        let u2 = P256.Scalar(montgomery: r) * w
        var sum = P256.JacobianPoint.infinity
        generatorTable.multiply(u1.limbs, into: &sum)
        keyTable.multiply(u2.limbs, into: &sum)
        return sum.hasXModN(equalTo: r)
    }

    /// The coordinate `name` (`OSSL_PKEY_PARAM_EC_PUB_X` or `_Y`) of an EC key's point in Montgomery form, or `nil`.
    private static func coordinate(_ name: String, of pkey: OpaquePointer) -> P256.FieldElement? {
        var number: OpaquePointer? = nil
        guard EVP_PKEY_get_bn_param(pkey, name, &number) == 1, let number else {
            OpenSSLError.discardQueue()
            return nil
        }
        defer { BN_free(number) }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 32) { bytes in
            guard BN_bn2binpad(number, bytes.baseAddress, 32) == 32, let value = P256.Limbs(bigEndian: bytes) else {
                OpenSSLError.discardQueue()
                return nil
            }
            return P256.FieldElement(value)
        }
    }
}
