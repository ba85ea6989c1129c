import Foundation
import Signatures
import Testing

/// The raw RSA public operation that VDV-KA message recovery starts with, on the real VRR barcode.
@Suite("RSA raw public operation")
struct RSARawPublicKeyTests {
    /// The sub-CA `DEVDV 11 02 16` of the shipped certificates: its body is in clear after an 8-byte
    /// `7F21 81EF 5F4E 81EB` header; modulus at body offset 39 (192 bytes), exponent after it.
    static func subCAKey() throws -> RSARawPublicKey {
        let file = try Fixture.bytes("vdv/4445564456110216.vdv-cert")
        let body = Array(file.dropFirst(8))
        return try RSARawPublicKey(modulus: Array(body[39..<231]), exponent: Array(body[231...]))
    }

    /// The 192-byte certificate signature (`5F37`) inside the ticket's `7F21`.
    static func certificateSignature() throws -> [UInt8] {
        Array(try Fixture.bytes("vdv/vrr-deutschlandticket-2023-03.bin")[156..<348])
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
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let keyFile = directory.appendingPathComponent("key.pem")
        try write(try key.publicKey().pem, to: keyFile)
        let tool = try OpenSSLTool.run(
            ["pkeyutl", "-verifyrecover", "-pubin", "-inkey", keyFile.path, "-pkeyopt", "rsa_padding_mode:none"],
            input: signature)
        #expect(tool == (try key.publicOperation(signature)))
        #expect(try key.publicKey().kind == .rsa(bits: 1536))
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
