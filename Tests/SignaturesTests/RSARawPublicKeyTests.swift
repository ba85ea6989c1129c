import Foundation
import Signatures
import TestSupport
import Testing

/// The raw RSA public operation that VDV-KA message recovery starts with, on the real VRR barcode.
@Suite("RSA raw public operation")
struct RSARawPublicKeyTests {
    /// The sub-CA `DEVDV 11 02 16` of the shipped certificates: its body is in clear after an 8-byte
    /// `7F21 81EF 5F4E 81EB` header; modulus at body offset 39 (192 bytes), exponent after it.
    static func subCAKey() throws -> RSARawPublicKey {
        let file = try Fixtures.bytes("vdv/certs/4445564456110216.vdv-cert")
        let body = Array(file.dropFirst(8))
        return try RSARawPublicKey(modulus: Array(body[39..<231]), exponent: Array(body[231...]))
    }

    /// The 192-byte certificate signature (`5F37`) inside the ticket's `7F21`.
    static func certificateSignature() throws -> [UInt8] {
        Array(try Fixtures.bytes("vdv/vrr-deutschlandticket-2023-03.bin")[156..<348])
    }

    /// s^e mod n as the openssl tool computes it (`pkeyutl -verifyrecover`, no padding).
    static func opensslPublicOperation(_ key: RSARawPublicKey, _ signature: [UInt8]) throws -> [UInt8] {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let keyFile = directory.appendingPathComponent("key.pem")
        try write(try key.publicKey().pem, to: keyFile)
        return try OpenSSLTool.run(
            ["pkeyutl", "-verifyrecover", "-pubin", "-inkey", keyFile.path, "-pkeyopt", "rsa_padding_mode:none"],
            input: signature)
    }

    @Test("the sub-CA key opens the ticket's certificate signature into an ISO 9796-2 block (6A … BC)")
    func recoversBlock() throws {
        let key = try Self.subCAKey()
        #expect(key.bits == 1536)
        #expect(key.exponent == [0x01, 0x00, 0x01])
        let block = try key.publicOperation(try Self.certificateSignature())
        #expect(block.count == 192)
        #expect(block.first == 0x6A)
        #expect(block.last == 0xBC)
        // The recovered certificate body starts with CPI 4 and the CA reference "DEVDV".
        #expect(Array(block[1..<7]) == [0x04] + Array("DEVDV".utf8))
    }

    @Test("the openssl tool computes the same block (pkeyutl -verifyrecover, no padding)")
    func matchesOpenSSLTool() throws {
        let key = try Self.subCAKey()
        let signature = try Self.certificateSignature()
        let tool = try Self.opensslPublicOperation(key, signature)
        #expect(tool == (try key.publicOperation(signature)))
        #expect(try key.publicKey().kind == .rsa(bits: 1536))
    }

    /// Exponents up to 64 bits take a bit-by-bit path of our own, longer ones OpenSSL's `BN_mod_exp_mont`:
    /// both must give what the openssl tool gives, for the same modulus and input.
    @Test(
        "exponents of every size (3, 65537, VDV's 0x40000081, 64 and 72 bits) give the openssl tool's result",
        arguments: [
            [0x03], [0x01, 0x00, 0x01], [0x40, 0x00, 0x00, 0x81],
            [0xF0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01],
            [0x80, 0x12, 0x34, 0x56, 0x78, 0x9A, 0xBC, 0xDE, 0xF1],
        ] as [[UInt8]])
    func exponentsOfEverySize(exponent: [UInt8]) throws {
        let modulus = try Self.subCAKey().modulus
        let key = try RSARawPublicKey(modulus: modulus, exponent: exponent)
        let signature = try Self.certificateSignature()
        let tool = try Self.opensslPublicOperation(key, signature)
        #expect(tool.count == 192)
        #expect(tool == (try key.publicOperation(signature)))
        // The same signature read out of a larger buffer (as the verifier reads it from a barcode).
        let carried = [0x9E, 0x81, 0xC0] + signature + [0x9A, 0x01, 0x00]
        #expect(tool == (try key.publicOperation(carried[3..<195])))
    }

    @Test("a signature of the wrong length or not below the modulus is refused, not computed")
    func refusesBadInput() throws {
        let key = try Self.subCAKey()
        let signature = try Self.certificateSignature()
        #expect(throws: SignatureError.self) { try key.publicOperation(Array(signature.dropLast())) }
        #expect(throws: SignatureError.self) { try key.publicOperation(signature + [0]) }
        #expect(throws: SignatureError.self) { try key.publicOperation(key.modulus) }
        #expect(throws: SignatureError.self) { try key.publicOperation([UInt8](repeating: 0xFF, count: 192)) }
        #expect(throws: SignatureError.self) { try key.publicOperation([]) }
    }

    @Test("moduli and exponents that make no RSA key are refused")
    func refusesBadKeys() throws {
        let key = try Self.subCAKey()
        var even = key.modulus
        even[even.count - 1] &= 0xFE
        #expect(throws: SignatureError.self) { try RSARawPublicKey(modulus: even, exponent: [1, 0, 1]) }
        #expect(throws: SignatureError.self) { try RSARawPublicKey(modulus: [], exponent: [1, 0, 1]) }
        #expect(throws: SignatureError.self) { try RSARawPublicKey(modulus: [0, 0, 0x81], exponent: [3]) }
        #expect(throws: SignatureError.self) { try RSARawPublicKey(modulus: key.modulus, exponent: [1]) }
        #expect(throws: SignatureError.self) { try RSARawPublicKey(modulus: key.modulus, exponent: [0, 0]) }
        #expect(throws: SignatureError.self) { try RSARawPublicKey(modulus: key.modulus, exponent: [1, 0, 0]) }
        #expect(throws: SignatureError.self) { try RSARawPublicKey(modulus: key.modulus, exponent: key.modulus) }
        // Leading zero bytes are not part of the number.
        let padded = try RSARawPublicKey(modulus: [0, 0] + key.modulus, exponent: [0, 0, 0, 1, 0, 1])
        #expect(padded.modulusByteCount == 192)
        #expect(
            try padded.publicOperation(try Self.certificateSignature())
                == (try key.publicOperation(try Self.certificateSignature())))
    }
}
