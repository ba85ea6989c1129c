/// ISO/IEC 9796-2 digital signature scheme 1 with partial message recovery, as VDV-KA uses it
/// (RSA, SHA-1, implicit hash trailer `BC`).
///
/// The signed message is mostly inside the RSA block: after the public operation m = s^e mod n
/// (done by the caller with `Signatures.RSARawPublicKey`), the block is `6A ‖ M1 ‖ SHA-1(M) ‖ BC`
/// and the rest of the message, M2, travels in clear beside the signature. The message M = M1 ‖ M2
/// is authentic only when its SHA-1 equals the hash in the block: the step kitinerary skips.
/// This is the pure part (no RSA, no OpenSSL), so that it can be tested byte for byte.
public enum ISO9796_2 {
    /// Why a block does not open into an authentic message. Any of these means the signature is not
    /// valid for this key (a wrong key gives random bytes, which fail here), never a malformed payload.
    public enum RecoveryFailure: Error, Sendable, Hashable, CustomStringConvertible {
        /// The block is too short to hold a header, a hash and a trailer.
        case blockTooShort(Int)
        /// The first byte is not `6A` (scheme 1, partial recovery, no padding).
        case header(UInt8)
        /// The last byte is not `BC` (implicit SHA-1).
        case trailer(UInt8)
        /// The SHA-1 of the recovered message does not match the hash in the block.
        case hashMismatch

        /// A sentence for a verdict's reason.
        public var description: String {
            switch self {
            case .blockTooShort(let count):
                "the RSA block has \(count) bytes, too few for ISO 9796-2 (at least 23)"
            case .header(let byte):
                "the recovered block starts with \(hex(byte)) instead of 6A: the signature was not made with this key or was altered"
            case .trailer(let byte):
                "the recovered block ends with \(hex(byte)) instead of BC: the signature was not made with this key or was altered"
            case .hashMismatch:
                "the SHA-1 of the recovered message does not match the one in the signature: the data was altered"
            }
        }
    }

    /// The header byte of scheme 1 with partial recovery: `01` (scheme 1), `1` (more data), `0` + `1010`.
    public static let partialRecoveryHeader: UInt8 = 0x6A
    /// The trailer byte for an implicit SHA-1 hash.
    public static let sha1Trailer: UInt8 = 0xBC
    /// The length of a SHA-1 hash.
    static let hashByteCount = 20

    /// How many message bytes a block of `blockByteCount` bytes recovers (k − 22: 106 for RSA-1024).
    public static func capacity(blockByteCount: Int) -> Int { max(0, blockByteCount - hashByteCount - 2) }

    /// Opens an RSA block into the signed message and checks its hash.
    ///
    /// - Parameters:
    ///   - block: m = s^e mod n, exactly as many bytes as the modulus (left-padded with zeros).
    ///   - remainder: M2, the part of the message that travels in clear (tag `9A` or `5F38`).
    ///   - sha1: SHA-1 over given bytes (e.g. `Signatures.digest(.sha1, _)`); passed in so that this
    ///     module needs no cryptographic library.
    /// - Returns: The authentic message M = M1 ‖ M2.
    /// - Throws: `RecoveryFailure` when the header, the trailer or the hash is wrong.
    public static func recoverMessage(
        block: [UInt8], remainder: [UInt8], sha1: ([UInt8]) -> [UInt8]
    ) throws(RecoveryFailure) -> [UInt8] {
        try recoverMessage(block: block, remainder: remainder[...], sha1: sha1)
    }

    /// The same, with the remainder as a part of a larger buffer (the barcode it travels in).
    public static func recoverMessage(
        block: [UInt8], remainder: ArraySlice<UInt8>, sha1: ([UInt8]) -> [UInt8]
    ) throws(RecoveryFailure) -> [UInt8] {
        let k = block.count
        guard k >= hashByteCount + 3 else { throw .blockTooShort(k) }
        guard block[0] == partialRecoveryHeader else { throw .header(block[0]) }
        guard block[k - 1] == sha1Trailer else { throw .trailer(block[k - 1]) }
        var message: [UInt8] = []
        message.reserveCapacity(k - hashByteCount - 2 + remainder.count)
        message.append(contentsOf: block[1..<(k - hashByteCount - 1)])
        message.append(contentsOf: remainder)
        let hash = sha1(message)
        let hashStart = k - hashByteCount - 1
        guard hash.count == hashByteCount else { throw .hashMismatch }
        var difference: UInt8 = 0
        for index in 0..<hashByteCount { difference |= hash[index] ^ block[hashStart + index] }
        guard difference == 0 else { throw .hashMismatch }
        return message
    }

    /// Builds the block for `message` (the inverse of `recoverMessage`, before the private-key
    /// operation): for signers, such as test issuers.
    ///
    /// - Parameters:
    ///   - message: M; longer than `capacity(blockByteCount:)`, as every VDV message is.
    ///   - blockByteCount: k, the modulus size in bytes.
    ///   - sha1: SHA-1 over given bytes.
    /// - Returns: The block and the remainder M2 that must travel in clear, or `nil` when the
    ///   message fits entirely (total recovery, which VDV does not use) or k is too small.
    public static func block(
        for message: [UInt8], blockByteCount: Int, sha1: ([UInt8]) -> [UInt8]
    ) -> (block: [UInt8], remainder: [UInt8])? {
        let capacity = capacity(blockByteCount: blockByteCount)
        guard capacity > 0, message.count > capacity else { return nil }
        let block = [partialRecoveryHeader] + message[..<capacity] + sha1(message) + [sha1Trailer]
        return (block, Array(message[capacity...]))
    }

    private static func hex(_ byte: UInt8) -> String {
        let text = String(byte, radix: 16, uppercase: true)
        return text.count == 1 ? "0" + text : text
    }
}
