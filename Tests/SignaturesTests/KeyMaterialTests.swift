import Foundation
import Signatures
import TestSupport
import Testing

@Suite("Key files")
struct KeyMaterialTests {
    static let certificatePEM = try! Fixtures.text("uic/0080-00007.pem")
    static let certificate = try! X509Certificate(pem: certificatePEM)

    @Test("a PEM certificate gives its key and the certificate")
    func pemCertificate() throws {
        let material = try KeyMaterial(parsingKeyFile: Array(Self.certificatePEM.utf8))
        #expect(material.certificate == Self.certificate)
        #expect(material.publicKey == Self.certificate.publicKey)
    }

    @Test("a DER certificate gives its key and the certificate")
    func derCertificate() throws {
        let material = try KeyMaterial(parsingKeyFile: Self.certificate.der)
        #expect(material.certificate == Self.certificate)
    }

    @Test("a PEM public key gives the key, without certificate")
    func pemPublicKey() throws {
        let material = try KeyMaterial(parsingKeyFile: Array(TestKeys.ed25519.publicKey.pem.utf8))
        #expect(material.certificate == nil)
        #expect(material.publicKey == TestKeys.ed25519.publicKey)
        #expect(material.publicKey.kind == .ed25519)
    }

    @Test("a DER SubjectPublicKeyInfo gives the key, without certificate")
    func derPublicKey() throws {
        let material = try KeyMaterial(parsingKeyFile: TestKeys.ecP256.publicKey.spkiDER)
        #expect(material.certificate == nil)
        #expect(material.publicKey == TestKeys.ecP256.publicKey)
    }

    @Test("base64 of a DER certificate, as in the UIC key list, gives the certificate")
    func bareBase64() throws {
        let material = try KeyMaterial(parsingKeyFile: Fixtures.bytes("uic/1080-00007.b64"))
        let certificate = try #require(material.certificate)
        #expect(certificate.publicKey.kind == .dsa(bits: 1024, qBits: 160))
        #expect(certificate.subject.contains("O = DB Fernverkehr AG"))
    }

    @Test("a PKCS#1 RSA PUBLIC KEY gives the key")
    func pkcs1RSAPublicKey() throws {
        let pkcs1 = try OpenSSLTool.run(["rsa", "-RSAPublicKey_out"], input: Array(try TestKeys.rsa2048.pemPKCS8.utf8))
        #expect(String(decoding: pkcs1, as: UTF8.self).contains("BEGIN RSA PUBLIC KEY"))
        let material = try KeyMaterial(parsingKeyFile: pkcs1)
        #expect(material.publicKey == TestKeys.rsa2048.publicKey)
    }

    @Test("with several PEM blocks, the first certificate is taken and other blocks are skipped")
    func chainAndExtraBlocks() throws {
        let other = try X509Certificate(pem: Fixtures.text("uic/1080-00002.pem"))
        let text = "Bag Attributes: as exported\n" + Self.certificatePEM + other.pem
        #expect(try KeyMaterial(parsingKeyFile: Array(text.utf8)).certificate == Self.certificate)
        let parametersFirst = try OpenSSLTool.run(["ecparam", "-name", "prime256v1", "-param_enc", "named_curve"])
        let material = try KeyMaterial(parsingKeyFile: parametersFirst + Array(TestKeys.ecP256.publicKey.pem.utf8))
        #expect(material.publicKey == TestKeys.ecP256.publicKey)
    }

    @Test(
        "a private key file given by mistake is named as such, with what to do",
        arguments: [
            "PKCS#8 PEM", "EC PRIVATE KEY PEM", "parameters and EC PRIVATE KEY", "PKCS#8 DER", "traditional DER",
        ])
    func privateKeyByMistake(_ form: String) throws {
        let bytes: [UInt8] =
            switch form {
            case "PKCS#8 PEM": Array(try TestKeys.ecP256.pemPKCS8.utf8)
            case "EC PRIVATE KEY PEM": try OpenSSLTool.run(["ecparam", "-name", "prime256v1", "-genkey", "-noout"])
            case "parameters and EC PRIVATE KEY": try OpenSSLTool.run(["ecparam", "-name", "prime256v1", "-genkey"])
            case "PKCS#8 DER": try TestKeys.rsa2048.pkcs8DER
            default: try OpenSSLTool.run(["pkey", "-outform", "DER"], input: Array(try TestKeys.dsa1024.pemPKCS8.utf8))
            }
        do {
            _ = try KeyMaterial(parsingKeyFile: bytes)
            Issue.record("a private key file was accepted")
        } catch {
            #expect(error.code == .privateKeyInsteadOfPublicKey)
            #expect(error.message.contains("private key"))
            #expect(error.message.contains("-pubout"))
        }
    }

    @Test("random bytes, empty files and other PEM blocks are refused, saying what was found")
    func unrecognised() throws {
        var generator = SystemRandomNumberGenerator()
        let noise = (0..<300).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let cases: [([UInt8], String)] = [
            ([], "empty"),
            ([0x01] + noise, "neither PEM"),
            ([0x30, 0x82, 0x01, 0x00] + noise, "neither an X.509 certificate nor a SubjectPublicKeyInfo"),
            (Array("hello, this is not a key\n".utf8), "neither PEM"),
            // A UIC key list entry whose base64 lost a character.
            (Array(try Fixtures.bytes("uic/1080-00007.b64").dropLast(2)), "does not decode"),
            (
                Array("-----BEGIN CERTIFICATE REQUEST-----\nMAA=\n-----END CERTIFICATE REQUEST-----\n".utf8),
                "\"CERTIFICATE REQUEST\""
            ),
            (Array("-----BEGIN PUBLIC KEY-----\nnot base64 at all\n".utf8), "no readable PEM block"),
        ]
        for (bytes, expected) in cases {
            do {
                _ = try KeyMaterial(parsingKeyFile: bytes)
                Issue.record("accepted: \(expected)")
            } catch {
                #expect(error.code == .unrecognisedKeyFile)
                #expect(error.message.contains(expected), "\(error)")
            }
        }
    }

    @Test("a PEM block whose content is broken says so")
    func brokenPEMContent() throws {
        let broken = "-----BEGIN PUBLIC KEY-----\nMAMCAQE=\n-----END PUBLIC KEY-----\n"
        do {
            _ = try KeyMaterial(parsingKeyFile: Array(broken.utf8))
            Issue.record("a broken public key was accepted")
        } catch {
            #expect(error.code == .invalidKey)
        }
    }
}
