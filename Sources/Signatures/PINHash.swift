import COpenSSL

/// A salted, slow hash of an inspector's PIN (PBKDF2-HMAC-SHA256 through OpenSSL), as the store keeps it.
///
/// A PIN is short, so the hash must be slow to guess offline from a stolen store: 100,000 iterations cost
/// about 30 ms per login on a handheld, and the same per guess to an attacker.
public struct PINHash: Sendable, Equatable {
    /// Random bytes chosen when the PIN was set.
    public var salt: [UInt8]
    /// The PBKDF2 output.
    public var hash: [UInt8]
    /// The iteration count used, kept so that it can be raised later without breaking stored hashes.
    public var iterations: Int

    public static let defaultIterations = 100_000

    public init(salt: [UInt8], hash: [UInt8], iterations: Int) {
        self.salt = salt
        self.hash = hash
        self.iterations = iterations
    }

    /// Hashes `pin` with a fresh random salt.
    public init(pin: String, iterations: Int = PINHash.defaultIterations) throws(SignatureError) {
        let salt = try Self.randomBytes(16)
        self.init(
            salt: salt, hash: try Self.derive(pin: pin, salt: salt, iterations: iterations), iterations: iterations)
    }

    /// Whether `pin` is the PIN this hash was made from (compared in constant time).
    public func matches(_ pin: String) -> Bool {
        guard let candidate = try? Self.derive(pin: pin, salt: salt, iterations: iterations),
            candidate.count == hash.count
        else { return false }
        var difference: UInt8 = 0
        for (a, b) in zip(candidate, hash) { difference |= a ^ b }
        return difference == 0
    }

    static func derive(pin: String, salt: [UInt8], iterations: Int) throws(SignatureError) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: 32)
        let pinBytes = Array(pin.utf8)
        let ok = pinBytes.withUnsafeBufferPointer { pinBuffer in
            pinBuffer.withMemoryRebound(to: CChar.self) { pinChars in
                PKCS5_PBKDF2_HMAC(
                    pinChars.baseAddress, Int32(pinChars.count), salt, Int32(salt.count), Int32(iterations),
                    EVP_sha256(), Int32(output.count), &output)
            }
        }
        guard ok == 1 else { throw SignatureError(code: .hashingFailed, message: "PBKDF2 failed") }
        return output
    }

    /// `count` bytes from OpenSSL's CSPRNG.
    public static func randomBytes(_ count: Int) throws(SignatureError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        guard RAND_bytes(&bytes, Int32(count)) == 1 else {
            throw SignatureError(code: .hashingFailed, message: "The random number generator failed")
        }
        return bytes
    }
}
