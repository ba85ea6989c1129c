import COpenSSL

/// DSA verification with tables of powers of a key's two fixed bases, g and y, made once per key.
///
/// A DSA check computes v = (g^u1 · y^u2 mod p) mod q. OpenSSL runs that as one simultaneous exponentiation
/// (`BN_mod_exp2_mont`): a squaring per bit of q and a multiplication per window, about 240 multiplications modulo
/// p for a 160-bit q. Both bases belong to the key, so their powers b^(d · 16^i) (d from 1 to 15, one row i per
/// four bits of q) can be computed once: then b^u is one multiplication per non-zero hexadecimal digit of u, at most
/// 40 per base for a 160-bit q, 64 for a 256-bit one, and no squarings. A UIC or ERA SSB check then takes about
/// a third of OpenSSL's time.
///
/// The tables take 2 · ⌈qBits / 4⌉ · 15 numbers of p's size (154 KiB for DSA-1024, 492 KiB for DSA-2048/256), so
/// they are made only for a key that keeps being used (`PublicKey` makes them at its `tableUse`-th check), and all
/// keys' tables together stay under `FixedBaseBudget.limit`; past it a key is checked by OpenSSL, as before.
///
/// Everything here is public data (a key, a signature, a digest): no constant-time arithmetic is needed.
final class DSAFixedBase: FixedBaseTables {
    /// p, q and p's Montgomery context. Only read after `init`, which OpenSSL allows from several threads at once
    /// (each check has its own `BN_CTX`).
    nonisolated(unsafe) private let p: OpaquePointer
    nonisolated(unsafe) private let q: OpaquePointer
    nonisolated(unsafe) private let montgomery: OpaquePointer
    /// 1 in Montgomery form (R mod p), where a product starts.
    nonisolated(unsafe) private let one: OpaquePointer
    /// The powers of g, then those of y, in Montgomery form: row i, digit d (1…15) at `(i * 15 + d - 1)`.
    nonisolated(unsafe) private let gPowers: [OpaquePointer]
    nonisolated(unsafe) private let yPowers: [OpaquePointer]
    /// q's size in bits and bytes, and the number of 4-bit rows.
    private let qBits: Int
    private let qBytes: Int
    private let rows: Int
    /// What the tables take, returned to the budget when the key goes.
    private let tableBytes: Int

    /// How many checks with one key before its tables are made: a key seen once (a test, a one-off import) does not
    /// pay for them, and it costs about as much as four checks.
    static let tableUse = 8

    /// Tables for the DSA key `pkey`, or `nil` when it is not one OpenSSL would check (q of 160, 224 or 256 bits),
    /// the budget is spent, or OpenSSL fails.
    init?(pkey: OpaquePointer) {
        var numbers: [OpaquePointer] = []
        defer { for number in numbers { BN_free(number) } }
        for name in [OSSL_PKEY_PARAM_FFC_P, OSSL_PKEY_PARAM_FFC_Q, OSSL_PKEY_PARAM_FFC_G, OSSL_PKEY_PARAM_PUB_KEY] {
            var number: OpaquePointer? = nil
            guard EVP_PKEY_get_bn_param(pkey, name, &number) == 1, let number else {
                OpenSSLError.discardQueue()
                return nil
            }
            numbers.append(number)
        }
        let (p, q, g, y) = (numbers[0], numbers[1], numbers[2], numbers[3])
        let qBits = Int(BN_num_bits(q))
        let pBits = Int(BN_num_bits(p))
        // The q sizes OpenSSL's own check accepts; p up to what any ticket format uses.
        guard [160, 224, 256].contains(qBits), (1_024...3_072).contains(pBits), BN_is_odd(p) == 1 else { return nil }
        let rows = (qBits + 3) / 4
        let tableBytes = 2 * rows * 15 * ((pBits + 63) / 64 * 8 + 24)
        guard FixedBaseBudget.reserve(tableBytes) else { return nil }
        let context = BN_CTX_new()
        defer { BN_CTX_free(context) }
        let montgomery = BN_MONT_CTX_new()
        let one = BN_new()
        var gPowers: [OpaquePointer]?
        var yPowers: [OpaquePointer]?
        if let context, let montgomery, let one, BN_MONT_CTX_set(montgomery, p, context) == 1,
            BN_set_word(one, 1) == 1, BN_to_montgomery(one, one, montgomery, context) == 1
        {
            gPowers = Self.powers(of: g, rows: rows, montgomery: montgomery, context: context)
            if gPowers != nil { yPowers = Self.powers(of: y, rows: rows, montgomery: montgomery, context: context) }
        }
        guard let montgomery, let one, let gPowers, let yPowers else {
            // Whatever was made is freed (OpenSSL's free functions take NULL), and the budget given back.
            for number in (gPowers ?? []) + (yPowers ?? []) { BN_free(number) }
            BN_free(one)
            BN_MONT_CTX_free(montgomery)
            FixedBaseBudget.release(tableBytes)
            return nil
        }
        // p and q are kept: taken out of `numbers`, which frees the rest.
        numbers = [g, y]
        self.p = p
        self.q = q
        self.montgomery = montgomery
        self.one = one
        self.gPowers = gPowers
        self.yPowers = yPowers
        self.qBits = qBits
        self.qBytes = (qBits + 7) / 8
        self.rows = rows
        self.tableBytes = tableBytes
    }

    deinit {
        for number in gPowers { BN_free(number) }
        for number in yPowers { BN_free(number) }
        BN_free(one)
        BN_MONT_CTX_free(montgomery)
        BN_free(p)
        BN_free(q)
        FixedBaseBudget.release(tableBytes)
    }

    /// Whether (r, s) is a valid signature over `digest`, as OpenSSL's DSA check decides it: 0 < r, s < q; the
    /// digest's leftmost bytes, as many as q has (`qBits / 8`), are the number signed.
    ///
    /// - Returns: `nil` when OpenSSL's arithmetic fails (out of memory), for the caller to ask OpenSSL itself.
    func isValid(r: ArraySlice<UInt8>, s: ArraySlice<UInt8>, digest: UnsafeBufferPointer<UInt8>) -> Bool? {
        guard let context = BNContextPool.shared.take() else { return nil }
        defer { BNContextPool.shared.give(back: context) }
        BN_CTX_start(context)
        defer { BN_CTX_end(context) }
        guard let rNumber = BN_CTX_get(context), let sNumber = BN_CTX_get(context), let w = BN_CTX_get(context),
            let u1 = BN_CTX_get(context), let u2 = BN_CTX_get(context), let product = BN_CTX_get(context),
            let v = BN_CTX_get(context),
            r.withUnsafeBufferPointer({ BN_bin2bn($0.baseAddress, Int32($0.count), rNumber) }) != nil,
            s.withUnsafeBufferPointer({ BN_bin2bn($0.baseAddress, Int32($0.count), sNumber) }) != nil
        else { return nil }
        guard BN_is_zero(rNumber) == 0, BN_is_zero(sNumber) == 0, BN_ucmp(rNumber, q) < 0, BN_ucmp(sNumber, q) < 0
        else { return false }
        // OpenSSL cuts a longer digest to q's size in whole bytes.
        let digestCount = min(digest.count, qBits / 8)
        guard BN_mod_inverse(w, sNumber, q, context) != nil,
            BN_bin2bn(digest.baseAddress, Int32(digestCount), u1) != nil,
            BN_mod_mul(u1, u1, w, q, context) == 1,
            BN_mod_mul(u2, rNumber, w, q, context) == 1,
            BN_copy(product, one) != nil,
            multiply(product, by: gPowers, exponent: u1, context: context),
            multiply(product, by: yPowers, exponent: u2, context: context),
            BN_from_montgomery(v, product, montgomery, context) == 1,
            BN_nnmod(v, v, q, context) == 1
        else {
            OpenSSLError.discardQueue()
            return nil
        }
        return BN_cmp(v, rNumber) == 0
    }

    /// product · b^exponent (Montgomery form), b being the base of `powers`; exponent < q.
    private func multiply(
        _ product: OpaquePointer, by powers: [OpaquePointer], exponent: OpaquePointer, context: OpaquePointer
    ) -> Bool {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: qBytes) { bytes in
            guard BN_bn2binpad(exponent, bytes.baseAddress, Int32(qBytes)) == Int32(qBytes) else { return false }
            // Row i holds the powers for the i-th hexadecimal digit from the least significant one.
            for row in 0..<rows {
                let byte = bytes[qBytes - 1 - row / 2]
                let digit = Int(row % 2 == 0 ? byte & 0x0F : byte >> 4)
                guard digit != 0 else { continue }
                guard BN_mod_mul_montgomery(product, product, powers[row * 15 + digit - 1], montgomery, context) == 1
                else { return false }
            }
            return true
        }
    }

    /// b^(d · 16^i) in Montgomery form for every row i < `rows` and digit d from 1 to 15, or `nil` (nothing left
    /// allocated) when OpenSSL fails.
    private static func powers(of base: OpaquePointer, rows: Int, montgomery: OpaquePointer, context: OpaquePointer)
        -> [OpaquePointer]?
    {
        var table: [OpaquePointer] = []
        table.reserveCapacity(rows * 15)
        func fail() -> [OpaquePointer]? {
            for number in table { BN_free(number) }
            return nil
        }
        // b^(16^i) for the current row, starting with b itself.
        guard let rowBase = BN_new() else { return nil }
        defer { BN_free(rowBase) }
        guard BN_to_montgomery(rowBase, base, montgomery, context) == 1 else { return fail() }
        for _ in 0..<rows {
            guard let first = BN_dup(rowBase) else { return fail() }
            table.append(first)
            for _ in 2...15 {
                guard let next = BN_new() else { return fail() }
                table.append(next)
                guard BN_mod_mul_montgomery(next, table[table.count - 2], rowBase, montgomery, context) == 1 else {
                    return fail()
                }
            }
            // b^(16 · 16^i) = b^(15 · 16^i) · b^(16^i): the next row's base.
            guard BN_mod_mul_montgomery(rowBase, table[table.count - 1], rowBase, montgomery, context) == 1 else {
                return fail()
            }
        }
        return table
    }
}
