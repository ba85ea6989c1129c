import Signatures
import TestSupport
import Testing

/// The real DB sample tickets: the signature over the compressed bytes, as UIC 918.3 defines it.
@Suite("UIC 918.3 sample tickets")
struct UICSampleTicketTests {
    /// The parts of a `#UT` container that the signature check needs.
    struct Container {
        var signatureField: [UInt8]
        var signedBytes: [UInt8]
        /// Where the signed bytes start, for tampering with them.
        var signedOffset: Int

        init(_ bytes: [UInt8]) throws {
            let version = String(decoding: bytes[3..<5], as: UTF8.self)
            let signatureLength = version == "01" ? 50 : 64
            let lengthOffset = 14 + signatureLength
            let length = try #require(Int(String(decoding: bytes[lengthOffset..<(lengthOffset + 4)], as: UTF8.self)))
            signatureField = Array(bytes[14..<lengthOffset])
            signedOffset = lengthOffset + 4
            signedBytes = Array(bytes[signedOffset..<(signedOffset + length)])
        }
    }

    struct Sample: Sendable, CustomTestStringConvertible {
        var ticket: String
        var key: String
        var scheme: SignatureScheme
        var testDescription: String { ticket }

        static let all = [
            Sample(ticket: "uic/db-city-mobil-v1-sha1.bin", key: "uic/0080-00007.pem", scheme: .dsa(.sha1, .der)),
            Sample(
                ticket: "uic/db-supersparpreis-v2-sha256.bin", key: "uic/1080-00002.pem", scheme: .dsa(.sha256, .raw)),
            Sample(ticket: "uic/db-deutschland-ticket-2025.bin", key: "uic/1080-00007.b64", scheme: .dsa(.sha1, .der)),
        ]
    }

    @Test("the sample ticket's signature is valid with its issuer's key", arguments: Sample.all)
    func validSignature(_ sample: Sample) throws {
        let container = try Container(Fixtures.bytes(sample.ticket))
        let key = try KeyMaterial(parsingKeyFile: Fixtures.bytes(sample.key)).publicKey
        #expect(key.isValidSignature(container.signatureField, for: container.signedBytes, scheme: sample.scheme))
    }

    @Test("flipping any byte of the compressed part makes the signature invalid", arguments: Sample.all)
    func everyByteCounts(_ sample: Sample) throws {
        let container = try Container(Fixtures.bytes(sample.ticket))
        let key = try KeyMaterial(parsingKeyFile: Fixtures.bytes(sample.key)).publicKey
        for index in container.signedBytes.indices {
            var tampered = container.signedBytes
            tampered[index] ^= 0xFF
            #expect(
                !key.isValidSignature(container.signatureField, for: tampered, scheme: sample.scheme), "byte \(index)")
        }
    }

    @Test("the sample ticket's signature is not valid with another issuer's key or hash", arguments: Sample.all)
    func otherKeyOrHash(_ sample: Sample) throws {
        let container = try Container(Fixtures.bytes(sample.ticket))
        let otherKeyFile = sample.key == "uic/0080-00007.pem" ? "uic/1080-00007.b64" : "uic/0080-00007.pem"
        let otherKey = try KeyMaterial(parsingKeyFile: Fixtures.bytes(otherKeyFile)).publicKey
        #expect(!otherKey.isValidSignature(container.signatureField, for: container.signedBytes, scheme: sample.scheme))
        let key = try KeyMaterial(parsingKeyFile: Fixtures.bytes(sample.key)).publicKey
        for digest in DigestAlgorithm.allCases where digest != sample.scheme.digestAlgorithm {
            let encodings: [SignatureEncoding] = [.der, .raw]
            for encoding in encodings {
                #expect(
                    !key.isValidSignature(
                        container.signatureField, for: container.signedBytes, scheme: .dsa(digest, encoding)))
            }
        }
    }
}
