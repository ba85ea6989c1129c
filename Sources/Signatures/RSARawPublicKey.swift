import COpenSSL

#if canImport(Glibc)
    import Glibc
#endif

/// An RSA public key made from a raw modulus and exponent, for the unpadded public operation
/// m = s^e mod n that ISO/IEC 9796-2 message recovery starts with.
///
/// VDV-KA certificates carry their keys as bare big-endian integers rather than as
/// SubjectPublicKeyInfo, and their signatures hide the signed message inside the RSA block: the
/// padding is checked by the caller (`TicketFormats`), so OpenSSL is asked only for the raw
/// exponentiation. A key is immutable and may be shared between threads and tasks.
public final class RSARawPublicKey: Sendable, CustomStringConvertible {
    /// The modulus n, big-endian, without leading zero bytes.
    public let modulus: [UInt8]
    /// The public exponent e, big-endian, without leading zero bytes.
    public let exponent: [UInt8]
    /// The size of the modulus in bits.
    public let bits: Int
    /// k: the number of bytes of the modulus, and so of every input and output of `publicOperation`.
    public var modulusByteCount: Int { modulus.count }

    /// The OpenSSL key, for `publicKey()`. `nonisolated(unsafe)`: only read after `init`.
    nonisolated(unsafe) private let pkey: OpaquePointer
    /// n and e as OpenSSL numbers, and n's Montgomery form, computed once: the operation is the modular
    /// exponentiation `BN_mod_exp_mont` itself (what OpenSSL's own RSA code runs, with the same cached
    /// Montgomery context). Going through `EVP_PKEY_encrypt` instead costs a provider context per operation,
    /// about a fifth of a 1024-bit public operation. Only read after `init`, which OpenSSL allows from
    /// several threads at once (each operation has its own `BN_CTX`).
    nonisolated(unsafe) private let n: OpaquePointer
    nonisolated(unsafe) private let e: OpaquePointer
    nonisolated(unsafe) private let montgomery: OpaquePointer
    /// e as one number when it fits in 64 bits (every public exponent in use).
    private let exponentWord: UInt64?

    /// The largest modulus accepted, in bits; larger keys are not used by any ticket format and would
    /// let a crafted certificate make each check arbitrarily slow.
    public static let maximumBits = 8192

    /// Makes a key from its modulus and exponent as big-endian bytes (leading zero bytes allowed).
    ///
    /// - Throws: `SignatureError` with code `.invalidKey` when the modulus is even, shorter than
    ///   512 bits or longer than `maximumBits`, or the exponent is not an odd number from 3 up to
    ///   (but not including) the modulus; `.encodingFailed` when OpenSSL cannot build the key.
    public init(modulus: [UInt8], exponent: [UInt8]) throws(SignatureError) {
        let n = Array(modulus.drop { $0 == 0 })
        let e = Array(exponent.drop { $0 == 0 })
        guard let lastModulusByte = n.last, lastModulusByte & 1 == 1 else {
            throw SignatureError(code: .invalidKey, message: "The RSA modulus is zero or even: not an RSA key.")
        }
        let bits = n.count * 8 - n[0].leadingZeroBitCount
        guard (512...Self.maximumBits).contains(bits) else {
            throw SignatureError(
                code: .invalidKey,
                message: "The RSA modulus has \(bits) bits; 512 to \(Self.maximumBits) bits are accepted.")
        }
        guard let lastExponentByte = e.last, lastExponentByte & 1 == 1, e.count > 1 || e[0] >= 3,
            e.count < n.count || (e.count == n.count && e.lexicographicallyPrecedes(n))
        else {
            throw SignatureError(
                code: .invalidKey, message: "The RSA exponent must be odd, at least 3 and smaller than the modulus.")
        }
        ERR_clear_error()
        guard let pkey = Self.makeKey(modulus: n, exponent: e) else {
            throw .fromOpenSSL(.encodingFailed, "OpenSSL could not build an RSA key from the modulus and exponent.")
        }
        guard let numbers = Self.montgomeryForm(modulus: n, exponent: e) else {
            EVP_PKEY_free(pkey)
            throw .fromOpenSSL(.encodingFailed, "OpenSSL could not prepare the RSA modulus for exponentiation.")
        }
        self.modulus = n
        self.exponent = e
        self.bits = bits
        self.pkey = pkey
        self.n = numbers.n
        self.e = numbers.e
        self.montgomery = numbers.montgomery
        self.exponentWord = e.count <= 8 ? e.reduce(0) { $0 << 8 | UInt64($1) } : nil
    }

    deinit {
        BN_MONT_CTX_free(montgomery)
        BN_free(n)
        BN_free(e)
        EVP_PKEY_free(pkey)
    }

    /// The size and exponent, e.g. `RSARawPublicKey(RSA 1024, e = 1073741953)`.
    public var description: String {
        let e = exponentWord.map { String($0) } ?? "\(exponent.count) bytes"
        return "RSARawPublicKey(RSA \(bits), e = \(e))"
    }

    /// Computes s^e mod n without padding: the RSA block a signature with message recovery hides.
    ///
    /// - Parameter input: s, exactly `modulusByteCount` bytes, big-endian.
    /// - Returns: m, exactly `modulusByteCount` bytes, big-endian (left-padded with zeros).
    /// - Throws: `SignatureError` with code `.invalidSignature` when the input has another length or
    ///   is not smaller than the modulus (ISO/IEC 9796-2 requires s < n); `.encodingFailed` when
    ///   OpenSSL itself fails (out of memory).
    public func publicOperation(_ input: [UInt8]) throws(SignatureError) -> [UInt8] {
        try input.withUnsafeBytes { buffer in
            Result { () throws(SignatureError) in try publicOperation(buffer) }
        }.get()
    }

    /// The same for s given as part of a larger buffer (a signature inside a barcode), without copying it out.
    public func publicOperation(_ input: ArraySlice<UInt8>) throws(SignatureError) -> [UInt8] {
        try input.withUnsafeBytes { buffer in
            Result { () throws(SignatureError) in try publicOperation(buffer) }
        }.get()
    }

    private func publicOperation(_ input: UnsafeRawBufferPointer) throws(SignatureError) -> [UInt8] {
        let k = modulusByteCount
        guard input.count == k else {
            throw SignatureError(
                code: .invalidSignature, message: "The signature has \(input.count) bytes; this RSA key needs \(k).")
        }
        return try publicOperation(prefix: input)
    }

    /// The same for s given as its first bytes only, the rest of its `modulusByteCount` bytes being zeros: an RSP6
    /// barcode's number is that prefix, and the zeros are appended here by a shift rather than by a copy.
    ///
    /// - Parameter prefix: s's leading bytes, big-endian, at most `modulusByteCount` of them.
    /// - Throws: as `publicOperation(_:)`; `.invalidSignature` when the prefix is longer than the modulus.
    public func publicOperation(zeroPaddedPrefix prefix: [UInt8]) throws(SignatureError) -> [UInt8] {
        guard prefix.count <= modulusByteCount else {
            throw SignatureError(
                code: .invalidSignature,
                message: "The signature has \(prefix.count) bytes; this RSA key needs at most \(modulusByteCount).")
        }
        return try prefix.withUnsafeBytes { buffer in
            Result { () throws(SignatureError) in try publicOperation(prefix: buffer) }
        }.get()
    }

    /// s^e mod n for s = `prefix` followed by zero bytes up to k bytes; `prefix.count <= k`, checked by the callers.
    private func publicOperation(prefix: UnsafeRawBufferPointer) throws(SignatureError) -> [UInt8] {
        let k = modulusByteCount
        let count = prefix.count
        // OpenSSL refuses s >= n as well, but through its error queue; checking here gives a clear reason. With
        // fewer bytes than n, s < n unless its bytes exceed n's first ones (n is odd: its last byte is not zero).
        let order =
            count == 0 ? Int32(0) : modulus.withUnsafeBytes { memcmp(prefix.baseAddress!, $0.baseAddress!, count) }
        guard order < 0 || (order == 0 && count < k) else {
            throw SignatureError(
                code: .invalidSignature, message: "The signature is not smaller than the RSA modulus: not a signature.")
        }
        guard let context = BNContextPool.shared.take() else {
            throw .fromOpenSSL(.encodingFailed, "OpenSSL could not allocate for the RSA operation.")
        }
        defer { BNContextPool.shared.give(back: context) }
        BN_CTX_start(context)
        defer { BN_CTX_end(context) }
        guard let s = BN_CTX_get(context), let m = BN_CTX_get(context),
            BN_bin2bn(prefix.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32(count), s) != nil,
            count == k || BN_lshift(s, s, Int32(8 * (k - count))) == 1,
            exponentiate(s, into: m, context: context)
        else {
            throw .fromOpenSSL(.encodingFailed, "OpenSSL could not apply the RSA public key to the signature.")
        }
        let output = [UInt8](unsafeUninitializedCapacity: k) { buffer, initialized in
            initialized = Int(BN_bn2binpad(m, buffer.baseAddress, Int32(k)))
            if initialized != k {
                // m < n, so it always fits in k bytes; anything else would misplace the header.
                initialized = 0
            }
        }
        guard output.count == k else {
            OpenSSLError.discardQueue()
            throw SignatureError(
                code: .encodingFailed, message: "OpenSSL returned a block of another length than \(k).")
        }
        return output
    }

    /// m = s^e mod n. A public exponent of up to 64 bits (65537, VDV's 0x40000081) is applied bit by bit
    /// with Montgomery multiplications in place, and its last bit (e is odd) multiplies by s itself rather
    /// than by s in Montgomery form, which leaves that form without a reduction of its own: together about
    /// 12 % under `BN_mod_exp_mont`, which prepares a window table sized for long exponents and converts back
    /// at the end. Longer exponents go to `BN_mod_exp_mont`. s < n, checked by the caller.
    private func exponentiate(_ s: OpaquePointer, into m: OpaquePointer, context: OpaquePointer) -> Bool {
        guard let word = exponentWord else { return BN_mod_exp_mont(m, s, e, n, context, montgomery) == 1 }
        guard let base = BN_CTX_get(context), let power = BN_CTX_get(context),
            BN_to_montgomery(base, s, montgomery, context) == 1, BN_copy(power, base) != nil
        else { return false }
        // Left to right, from the bit below the leading one down to bit 1; e >= 3, so bit 1 exists.
        var bit = 63 - word.leadingZeroBitCount - 1
        while bit >= 1 {
            guard BN_mod_mul_montgomery(power, power, power, montgomery, context) == 1 else { return false }
            if word >> UInt64(bit) & 1 == 1 {
                guard BN_mod_mul_montgomery(power, power, base, montgomery, context) == 1 else { return false }
            }
            bit -= 1
        }
        // Bit 0 is set: square, then (s^(e-1)·R)·s·R⁻¹ = s^e, out of the Montgomery form at once.
        return BN_mod_mul_montgomery(power, power, power, montgomery, context) == 1
            && BN_mod_mul_montgomery(m, power, s, montgomery, context) == 1
    }

    /// The same key as a `PublicKey`, e.g. to record it as a `TrustedKey`.
    ///
    /// - Throws: `SignatureError` with code `.encodingFailed` when OpenSSL cannot encode it.
    public func publicKey() throws(SignatureError) -> PublicKey {
        guard EVP_PKEY_up_ref(pkey) == 1 else {
            throw .fromOpenSSL(.encodingFailed, "OpenSSL could not share the RSA key.")
        }
        return try PublicKey(adopting: pkey)
    }

    /// n and e as OpenSSL numbers and n's Montgomery context; `nil` (nothing left allocated) when OpenSSL fails.
    private static func montgomeryForm(modulus: [UInt8], exponent: [UInt8]) -> (
        n: OpaquePointer, e: OpaquePointer, montgomery: OpaquePointer
    )? {
        let n = withBytes(modulus) { base, count in BN_bin2bn(base, Int32(count), nil) }
        let e = withBytes(exponent) { base, count in BN_bin2bn(base, Int32(count), nil) }
        let montgomery = BN_MONT_CTX_new()
        let context = BN_CTX_new()
        defer { BN_CTX_free(context) }
        guard let n, let e, let montgomery, let context, BN_MONT_CTX_set(montgomery, n, context) == 1 else {
            BN_free(n)
            BN_free(e)
            BN_MONT_CTX_free(montgomery)
            return nil
        }
        return (n, e, montgomery)
    }

    /// Builds an `EVP_PKEY` from n and e with OpenSSL 3's parameter builder.
    private static func makeKey(modulus: [UInt8], exponent: [UInt8]) -> OpaquePointer? {
        guard let builder = OSSL_PARAM_BLD_new() else { return nil }
        defer { OSSL_PARAM_BLD_free(builder) }
        let n = withBytes(modulus) { base, count in BN_bin2bn(base, Int32(count), nil) }
        let e = withBytes(exponent) { base, count in BN_bin2bn(base, Int32(count), nil) }
        defer {
            BN_free(n)
            BN_free(e)
        }
        guard let n, let e,
            OSSL_PARAM_BLD_push_BN(builder, COpenSSL_PKEY_PARAM_RSA_N(), n) == 1,
            OSSL_PARAM_BLD_push_BN(builder, COpenSSL_PKEY_PARAM_RSA_E(), e) == 1,
            let parameters = OSSL_PARAM_BLD_to_param(builder)
        else { return nil }
        defer { OSSL_PARAM_free(parameters) }
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "RSA", nil) else { return nil }
        defer { EVP_PKEY_CTX_free(context) }
        var pkey: OpaquePointer?
        guard EVP_PKEY_fromdata_init(context) == 1,
            EVP_PKEY_fromdata(context, &pkey, COpenSSL_EVP_PKEY_PUBLIC_KEY(), parameters) == 1
        else { return nil }
        return pkey
    }
}

/// A `BN_CTX` per thread, kept for the thread's life, so that its numbers keep their memory between
/// operations (a fresh context allocates its pool and every number's digits again). An operation runs on
/// one thread from start to end and never starts another inside, so a thread's context is used by one
/// operation at a time; no lock is taken. Freed when its thread ends.
final class BNContextPool: Sendable {
    /// Scratch contexts for the big-number operations of this module (the RSA public operation, the DSA tables'
    /// checks), kept between operations: a fresh `BN_CTX` allocates its pool of numbers and their digits again on
    /// every operation, a tenth of a 1024-bit one. One per thread; the operations never nest, each starts and ends
    /// its own frame (`BN_CTX_start`, `BN_CTX_end`).
    static let shared = BNContextPool()

    private let key: pthread_key_t

    init() {
        var key = pthread_key_t()
        let created = pthread_key_create(&key) { context in
            BN_CTX_free(OpaquePointer(context))
        }
        // Only fails when the process has used up its thread-specific keys (1024): then every operation
        // makes its own context (see `take`).
        self.key = created == 0 ? key : pthread_key_t.max
    }

    /// This thread's context, made on first use; `nil` only when OpenSSL cannot allocate.
    func take() -> OpaquePointer? {
        guard key != pthread_key_t.max else { return BN_CTX_new() }
        if let context = pthread_getspecific(key) { return OpaquePointer(context) }
        guard let context = BN_CTX_new() else { return nil }
        guard pthread_setspecific(key, UnsafeRawPointer(context)) == 0 else {
            BN_CTX_free(context)
            return nil
        }
        return context
    }

    /// Ends an operation's use of a context from `take()` (freed here only when it is not a thread's own).
    func give(back context: OpaquePointer) {
        if key == pthread_key_t.max { BN_CTX_free(context) }
    }
}
