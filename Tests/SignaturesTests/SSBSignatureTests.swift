import TestSupport
import Testing

@testable import Signatures

/// DSA 2048/224 with SHA-224 and 28-byte `r` and `s`, as ERA SSB tickets are signed (SŽ's key 1).
@Suite("DSA 2048/224 as ERA SSB uses it")
struct SSBSignatureTests {
    @Test("SŽ's NRT ticket verifies raw r‖s of 28 bytes each and as DER, with SHA-224 only")
    func szTicket() throws {
        let payload = try Fixtures.bytes("ssb/sz-nrt.bin")
        let key = try PublicKey(pem: try Fixtures.text("ssb/sz-1179-key1.pub.pem"))
        #expect(key.kind == .dsa(bits: 2048, qBits: 224))
        let signed = Array(payload.prefix(58))
        let raw = Array(payload[58...])
        #expect(key.isValidSignature(raw, for: signed, scheme: .dsa(.sha224, .raw)))
        #expect(!key.isValidSignature(raw, for: signed, scheme: .dsa(.sha256, .raw)))
        #expect(!key.isValidSignature(raw, for: signed, scheme: .dsa(.sha1, .raw)))
        // r starts with 0x86: its DER INTEGER needs a zero byte in front.
        let der = SignatureIntegers.der(r: raw[..<28], s: raw[28...])
        #expect(der[2...4] == [0x02, 0x1D, 0x00])
        #expect(key.isValidSignature(der, for: signed, scheme: .dsa(.sha224, .der)))
        #expect(key.isValidSignature(der + [0, 0, 0], for: signed, scheme: .dsa(.sha224, .der)))
        var altered = signed
        altered[10] ^= 1
        #expect(!key.isValidSignature(raw, for: altered, scheme: .dsa(.sha224, .raw)))
    }
}
