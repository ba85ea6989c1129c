import COpenSSL
import Foundation

/// A salted, slow, memory-hard hash of an inspector's PIN, as the store keeps it.
///
/// A PIN is a small space (a million 6-digit PINs), so a stolen store must not be enough to search it: new hashes
/// are scrypt (OpenSSL 3's `EVP_KDF` "SCRYPT", N = 2^15, r = 8, p = 1: 32 MiB and tens of milliseconds per guess,
/// which a GPU cannot run a million of in parallel cheaply), over the HMAC-SHA256 of the PIN under a secret kept apart
/// from the store (``PINSecret``): without that secret, a copied store gives nothing to search at all.
///
/// Hashes made by older farecheck versions (PBKDF2-HMAC-SHA256, 100,000 iterations, no secret) still verify; the
/// daemon replaces them with the current kind at the inspector's next good login (``needsUpgrade(to:secret:)``).
public struct PINHash: Sendable, Equatable {
    /// The key derivation function a hash was made with.
    public enum Function: String, Sendable, Equatable {
        /// PBKDF2-HMAC-SHA256 (farecheck before scrypt); `cost` is the iteration count.
        case pbkdf2SHA256 = "pbkdf2-sha256"
        /// scrypt; `cost` is N, with ``PINHash/blockSize`` (r) and ``PINHash/parallelism`` (p).
        case scrypt = "scrypt"
    }

    /// scrypt's cost parameters.
    public struct Parameters: Sendable, Equatable {
        /// N, the CPU and memory cost (a power of two).
        public var cost: Int
        /// r, the block size.
        public var blockSize: Int
        /// p, the parallelism.
        public var parallelism: Int

        public init(cost: Int, blockSize: Int, parallelism: Int) {
            self.cost = cost
            self.blockSize = blockSize
            self.parallelism = parallelism
        }

        /// N = 2^15, r = 8, p = 1: 32 MiB of memory per hash (128 · r · N bytes).
        public static let standard = Parameters(cost: 1 << 15, blockSize: 8, parallelism: 1)

        /// The memory one derivation needs, in bytes.
        public var memoryBytes: Int { 128 * blockSize * cost }
    }

    /// How the hash was made.
    public var function: Function
    /// Random bytes chosen when the PIN was set.
    public var salt: [UInt8]
    /// The derived bytes.
    public var hash: [UInt8]
    /// PBKDF2: the iteration count; scrypt: N.
    public var cost: Int
    /// scrypt's r (0 for PBKDF2).
    public var blockSize: Int
    /// scrypt's p (0 for PBKDF2).
    public var parallelism: Int
    /// The ``PINSecret/id`` of the secret mixed in, or `nil` when none was.
    public var secretID: String?

    /// The iteration count of the PBKDF2 hashes older versions made.
    public static let legacyIterations = 100_000

    public init(
        function: Function, salt: [UInt8], hash: [UInt8], cost: Int, blockSize: Int = 0, parallelism: Int = 0,
        secretID: String? = nil
    ) {
        self.function = function
        self.salt = salt
        self.hash = hash
        self.cost = cost
        self.blockSize = blockSize
        self.parallelism = parallelism
        self.secretID = secretID
    }

    /// Hashes `pin` with a fresh random salt: scrypt with `parameters`, over the PIN keyed with `secret` if given.
    public init(pin: String, secret: PINSecret?, parameters: Parameters = .standard) throws(SignatureError) {
        let salt = try Self.randomBytes(16)
        let hash = try Self.scrypt(Self.keyed(pin, secret), salt: salt, parameters: parameters)
        self.init(
            function: .scrypt, salt: salt, hash: hash, cost: parameters.cost, blockSize: parameters.blockSize,
            parallelism: parameters.parallelism, secretID: secret?.id)
    }

    /// A PBKDF2 hash as farecheck made them before scrypt (kept for tests of the upgrade and for old stores).
    public static func legacy(pin: String, iterations: Int = legacyIterations) throws(SignatureError) -> PINHash {
        let salt = try randomBytes(16)
        return PINHash(
            function: .pbkdf2SHA256, salt: salt, hash: try pbkdf2(Array(pin.utf8), salt: salt, iterations: iterations),
            cost: iterations)
    }

    /// What checking a PIN against a hash found.
    public enum Check: Sendable, Equatable {
        case match
        case mismatch
        /// The hash was made with a secret that is not the one given (or none was given): it cannot be checked.
        case secretUnavailable
    }

    /// Checks `pin` (compared in constant time). The work done is the hash's own derivation, whatever the answer.
    public func check(_ pin: String, secret: PINSecret?) -> Check {
        let candidate: [UInt8]?
        switch function {
        case .pbkdf2SHA256:
            candidate = try? Self.pbkdf2(Array(pin.utf8), salt: salt, iterations: cost)
        case .scrypt:
            if let secretID, secret?.id != secretID {
                // Derive anyway: a missing secret must not make the answer come sooner.
                _ = try? Self.scrypt(Self.keyed(pin, nil), salt: salt, parameters: parameters)
                return .secretUnavailable
            }
            candidate = try? Self.scrypt(
                Self.keyed(pin, secretID == nil ? nil : secret), salt: salt, parameters: parameters)
        }
        guard let candidate, candidate.count == hash.count else { return .mismatch }
        var difference: UInt8 = 0
        for (a, b) in zip(candidate, hash) { difference |= a ^ b }
        return difference == 0 ? .match : .mismatch
    }

    /// Whether `pin` is the PIN this hash was made from.
    public func matches(_ pin: String, secret: PINSecret?) -> Bool {
        check(pin, secret: secret) == .match
    }

    /// The scrypt parameters of this hash (zero for PBKDF2).
    public var parameters: Parameters {
        Parameters(cost: cost, blockSize: blockSize, parallelism: parallelism)
    }

    /// Whether a good login should replace this hash: it is PBKDF2, weaker than `parameters`, or made without the
    /// secret now configured (or with another).
    public func needsUpgrade(to parameters: Parameters, secret: PINSecret?) -> Bool {
        guard function == .scrypt else { return true }
        if cost < parameters.cost || blockSize < parameters.blockSize || parallelism < parameters.parallelism {
            return true
        }
        return secret.map { $0.id != secretID } ?? false
    }

    /// The PIN keyed with the secret (HMAC-SHA256), or the PIN's bytes when there is no secret.
    static func keyed(_ pin: String, _ secret: PINSecret?) -> [UInt8] {
        let bytes = Array(pin.utf8)
        guard let secret else { return bytes }
        var output = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        _ = secret.key.withUnsafeBytes { key in
            HMAC(EVP_sha256(), key.baseAddress, Int32(key.count), bytes, bytes.count, &output, &length)
        }
        return output
    }

    static func scrypt(_ password: [UInt8], salt: [UInt8], parameters: Parameters) throws(SignatureError) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: 32)
        // Twice the memory the parameters need, so that OpenSSL's own overhead never makes a valid hash fail.
        let ok = COpenSSL_scrypt(
            password, password.count, salt, salt.count, UInt64(parameters.cost), UInt32(parameters.blockSize),
            UInt32(parameters.parallelism), UInt64(parameters.memoryBytes * 2), &output, output.count)
        guard ok == 1 else { throw SignatureError(code: .hashingFailed, message: "scrypt failed") }
        return output
    }

    static func pbkdf2(_ pin: [UInt8], salt: [UInt8], iterations: Int) throws(SignatureError) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: 32)
        let ok = pin.withUnsafeBufferPointer { pinBuffer in
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

/// The secret mixed into every PIN hash, kept apart from the store (a file readable only by the daemon, or a
/// systemd credential), so that a copy of the store alone cannot be searched for PINs.
public struct PINSecret: Sendable {
    /// The secret's bytes.
    let key: [UInt8]
    /// A short fingerprint (16 hex digits of its SHA-256), stored with each hash to tell which secret made it;
    /// it says nothing about the secret itself.
    public let id: String

    /// The fewest bytes a secret may have.
    public static let minimumBytes = 32

    /// A secret from its bytes (surrounding whitespace dropped, so that a text file with a newline works).
    public init(bytes: [UInt8]) throws(SignatureError) {
        var trimmed = bytes[...]
        while let last = trimmed.last, last == 0x0A || last == 0x0D || last == 0x20 || last == 0x09 {
            trimmed = trimmed.dropLast()
        }
        guard trimmed.count >= Self.minimumBytes else {
            throw SignatureError(
                code: .hashingFailed,
                message: "the PIN secret has \(trimmed.count) bytes; it needs at least \(Self.minimumBytes) "
                    + "(make one with `farecheck staff secret --out PATH`)")
        }
        key = Array(trimmed)
        var digest = [UInt8](repeating: 0, count: 32)
        key.withUnsafeBufferPointer { _ = SHA256($0.baseAddress, $0.count, &digest) }
        id = digest.prefix(8).map { String(format: "%02x", $0) }.joined()
    }

    /// Reads the secret from a file.
    public init(file path: String) throws(SignatureError) {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw SignatureError(
                code: .hashingFailed, message: "cannot read the PIN secret \(path) (missing, or not readable)")
        }
        do {
            try self.init(bytes: Array(data))
        } catch {
            throw SignatureError(code: .hashingFailed, message: "\(path): \(error.message)")
        }
    }

    /// A new random secret as text: 64 hex digits and a newline (256 bits).
    public static func generateText() throws(SignatureError) -> String {
        try PINHash.randomBytes(32).map { String(format: "%02x", $0) }.joined() + "\n"
    }
}
