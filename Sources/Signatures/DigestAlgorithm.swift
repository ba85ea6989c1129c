import COpenSSL

/// A hash function used to make and check signatures.
public enum DigestAlgorithm: Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// SHA-1, still used by UIC 918.3 rail tickets signed with DSA-1024 (SHA1withDSA).
    case sha1
    /// SHA-224, used with DSA-2048/224.
    case sha224
    /// SHA-256, used by ES256, PS256, DSA-2048/256 and ECDSA P-256.
    case sha256
    /// SHA-384.
    case sha384
    /// SHA-512.
    case sha512

    /// The number of bytes the digest has.
    public var outputByteCount: Int {
        switch self {
        case .sha1: 20
        case .sha224: 28
        case .sha256: 32
        case .sha384: 48
        case .sha512: 64
        }
    }

    /// The algorithm's usual name, e.g. `SHA-256`.
    public var description: String {
        switch self {
        case .sha1: "SHA-1"
        case .sha224: "SHA-224"
        case .sha256: "SHA-256"
        case .sha384: "SHA-384"
        case .sha512: "SHA-512"
        }
    }

    /// The position of this algorithm in `allCases`, for per-algorithm tables.
    var index: Int {
        switch self {
        case .sha1: 0
        case .sha224: 1
        case .sha256: 2
        case .sha384: 3
        case .sha512: 4
        }
    }

    /// OpenSSL's `EVP_MD` for this algorithm, fetched from the default provider once per process.
    var evpMD: OpaquePointer { fetchedDigests[index] }
}

/// The `EVP_MD` objects, fetched once: in OpenSSL 3 an implicit fetch (by `EVP_sha256()` or by name)
/// on every call costs about as much as hashing a ticket.
///
/// `nonisolated(unsafe)` because `EVP_MD` is an opaque C pointer; a fetched `EVP_MD` is immutable and
/// OpenSSL documents it as safe to share between threads.
nonisolated(unsafe) private let fetchedDigests: [OpaquePointer] = DigestAlgorithm.allCases.map { algorithm in
    let name: String
    let builtIn: OpaquePointer?
    switch algorithm {
    case .sha1: (name, builtIn) = ("SHA1", EVP_sha1())
    case .sha224: (name, builtIn) = ("SHA2-224", EVP_sha224())
    case .sha256: (name, builtIn) = ("SHA2-256", EVP_sha256())
    case .sha384: (name, builtIn) = ("SHA2-384", EVP_sha384())
    case .sha512: (name, builtIn) = ("SHA2-512", EVP_sha512())
    }
    // A provider configuration without the algorithm makes the fetch fail; the built-in
    // descriptor then still works, only slower.
    if let fetched = EVP_MD_fetch(nil, name, nil) {
        return fetched
    }
    OpenSSLError.discardQueue()
    return builtIn!
}

/// Hashes `bytes` in one call.
///
/// - Parameters:
///   - algorithm: The hash function.
///   - bytes: The data to hash.
/// - Returns: The digest, `algorithm.outputByteCount` bytes.
public func digest(_ algorithm: DigestAlgorithm, _ bytes: [UInt8]) -> [UInt8] {
    // Exactly the digest's size: every algorithm here has a fixed output.
    [UInt8](unsafeUninitializedCapacity: algorithm.outputByteCount) { buffer, initialized in
        guard let base = buffer.baseAddress else { return }
        initialized = digest(algorithm, bytes, into: base)
    }
}

/// Hashes `bytes` into `output`, which must hold `algorithm.outputByteCount` bytes, and returns the digest's length.
///
/// With OpenSSL's context functions, not EVP (see the shim): every signature check hashes a message of a few hundred
/// bytes, where EVP's context and dispatch cost as much as the hashing.
@inline(__always)
func digest(_ algorithm: DigestAlgorithm, _ bytes: [UInt8], into output: UnsafeMutablePointer<UInt8>) -> Int {
    let length = algorithm.outputByteCount
    withBytes(bytes) { base, count in
        if algorithm == .sha1 {
            COpenSSL_SHA1(base, count, output)
        } else if COpenSSL_SHA2(length, base, count, output) != 1 {
            // Every SHA-2 length has its function there; zeros, which make every signature check fail, are the
            // safe outcome should one not.
            output.update(repeating: 0, count: length)
        }
    }
    return length
}
