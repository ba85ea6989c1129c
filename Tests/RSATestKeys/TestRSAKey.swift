import COpenSSL
import FareCore
import Foundation
import Signatures
import TicketFormats

/// An RSA private key of the test PKI, made by OpenSSL, with the raw private operation (m^d mod n)
/// that ISO 9796-2 signing and RSP6 tickets need and that product code never does.
public final class TestRSAKey: Sendable {
    nonisolated(unsafe) private let pkey: OpaquePointer
    /// n, big-endian, exactly the modulus size.
    public let modulus: [UInt8]
    /// e, 4 bytes big-endian, as CV certificates carry it.
    public let exponent: [UInt8]

    public init(bits: Int, exponent: UInt32 = 65_537) {
        let context = EVP_PKEY_CTX_new_from_name(nil, "RSA", nil)!
        defer { EVP_PKEY_CTX_free(context) }
        let e = BN_new()!
        defer { BN_free(e) }
        BN_set_word(e, UInt(exponent))
        var pkey: OpaquePointer?
        precondition(
            EVP_PKEY_keygen_init(context) == 1 && EVP_PKEY_CTX_set_rsa_keygen_bits(context, Int32(bits)) == 1
                && EVP_PKEY_CTX_set1_rsa_keygen_pubexp(context, e) == 1 && EVP_PKEY_generate(context, &pkey) == 1,
            "OpenSSL could not generate an RSA-\(bits) key")
        self.pkey = pkey!
        var n: OpaquePointer?
        precondition(EVP_PKEY_get_bn_param(self.pkey, "n", &n) == 1)
        defer { BN_free(n) }
        var bytes = [UInt8](repeating: 0, count: (bits + 7) / 8)
        precondition(BN_bn2binpad(n, &bytes, Int32(bytes.count)) == Int32(bytes.count))
        modulus = bytes
        self.exponent = (0..<4).map { UInt8(truncatingIfNeeded: exponent >> (24 - 8 * UInt32($0))) }
    }

    deinit {
        EVP_PKEY_free(pkey)
    }

    /// The modulus size in bytes.
    public var byteCount: Int { modulus.count }

    /// m^d mod n without padding: the signature of an ISO 9796-2 or PKCS#1 block.
    public func privateOperation(_ block: [UInt8]) -> [UInt8] {
        let context = EVP_PKEY_CTX_new_from_pkey(nil, pkey, nil)!
        defer { EVP_PKEY_CTX_free(context) }
        precondition(EVP_PKEY_decrypt_init(context) == 1)
        precondition(EVP_PKEY_CTX_set_rsa_padding(context, RSA_NO_PADDING) == 1)
        var output = [UInt8](repeating: 0, count: byteCount)
        var count = output.count
        precondition(EVP_PKEY_decrypt(context, &output, &count, block, block.count) == 1, "raw RSA failed")
        return Array(output.prefix(count))
    }

    /// Signs `message` with ISO 9796-2 scheme 1 (SHA-1): the signature and the remainder in clear.
    public func iso9796Signature(_ message: [UInt8]) -> (signature: [UInt8], remainder: [UInt8]) {
        let (block, remainder) = ISO9796_2.block(for: message, blockByteCount: byteCount) { digest(.sha1, $0) }!
        return (privateOperation(block), remainder)
    }

    /// Signs `message` with PKCS#1 v1.5 and SHA-1, the way the VDV root signs its clear body.
    public func pkcs1Signature(_ message: [UInt8]) -> [UInt8] {
        let digestInfo: [UInt8] =
            [0x30, 0x21, 0x30, 0x09, 0x06, 0x05, 0x2B, 0x0E, 0x03, 0x02, 0x1A, 0x05, 0x00, 0x04, 0x14]
            + digest(.sha1, message)
        let block =
            [0x00, 0x01] + [UInt8](repeating: 0xFF, count: byteCount - 3 - digestInfo.count) + [0x00] + digestInfo
        return privateOperation(block)
    }
}
