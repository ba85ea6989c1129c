import Foundation
import Signatures
import TestSupport
import Testing

@Suite("X.509 certificates")
struct CertificateTests {
    @Test("the UIC sample certificate 0080-00007 is a DSA-1024 key valid 2015-09-29 to 2025-09-26")
    func uic0080() throws {
        let certificate = try X509Certificate(pem: Fixtures.text("uic/0080-00007.pem"))
        #expect(certificate.publicKey.kind == .dsa(bits: 1024, qBits: 160))
        #expect(certificate.notBefore == utc("2015-09-29T08:32:17Z"))
        #expect(certificate.notAfter == utc("2025-09-26T08:32:17Z"))
        #expect(certificate.subject.contains("O = DB Vertrieb GmbH"))
        #expect(certificate.publicKey.supports(.dsa(.sha1, .der)))
        #expect(!certificate.publicKey.supports(.es256))
    }

    @Test("the UIC sample certificate 1080-00002 is a DSA-2048 key valid 2019-05-13 to 2024-05-11")
    func uic1080() throws {
        let certificate = try X509Certificate(pem: Fixtures.text("uic/1080-00002.pem"))
        #expect(certificate.publicKey.kind == .dsa(bits: 2048, qBits: 256))
        #expect(certificate.notBefore == utc("2019-05-13T08:37:30Z"))
        #expect(certificate.notAfter == utc("2024-05-11T08:37:30Z"))
    }

    @Test(
        "subject and dates read as the openssl tool prints them",
        arguments: ["uic/0080-00007.pem", "uic/1080-00002.pem"])
    func matchesTool(_ path: String) throws {
        let pem = try Fixtures.text(path)
        let certificate = try X509Certificate(pem: pem)
        let printed = String(
            decoding: try OpenSSLTool.run(["x509", "-noout", "-subject", "-issuer"], input: Array(pem.utf8)),
            as: UTF8.self
        )
        #expect(printed == "subject=\(certificate.subject)\nissuer=\(certificate.issuer)\n")
        let der = try OpenSSLTool.run(["x509", "-outform", "DER"], input: Array(pem.utf8))
        #expect(certificate.der == der)
        #expect(try X509Certificate(der: der) == certificate)
        #expect(try X509Certificate(pem: certificate.pem) == certificate)
    }

    @Test(
        "self-signed certificates are read back by openssl and verify with it",
        arguments: [
            KeyKind.ecP256, .ed25519, .rsa(bits: 2048), .dsa(bits: 1024, qBits: 160), .dsa(bits: 2048, qBits: 256),
        ])
    func selfSigned(_ kind: KeyKind) throws {
        let key = TestKeys.key(kind)
        let notBefore = utc("2026-01-01T00:00:00Z")
        let notAfter = utc("2031-06-30T12:34:56Z")
        let certificate = try X509Certificate.selfSigned(
            privateKey: key,
            subject: "CN=Demo Transit Test Key, O=Demo Transit, C=DE",
            notBefore: notBefore,
            notAfter: notAfter
        )
        #expect(certificate.publicKey == key.publicKey)
        #expect(certificate.notBefore == notBefore)
        #expect(certificate.notAfter == notAfter)
        #expect(certificate.subject == "CN = Demo Transit Test Key, O = Demo Transit, C = DE")
        #expect(certificate.issuer == certificate.subject)

        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("certificate.pem")
        try write(certificate.pem, to: file)
        let printed = String(
            decoding: try OpenSSLTool.run(["x509", "-in", file.path, "-noout", "-subject", "-startdate", "-enddate"]),
            as: UTF8.self
        )
        #expect(
            printed == """
                subject=CN = Demo Transit Test Key, O = Demo Transit, C = DE
                notBefore=Jan  1 00:00:00 2026 GMT
                notAfter=Jun 30 12:34:56 2031 GMT

                """
        )
        // The certificate's own signature is checked by openssl: the signing path is right.
        let verdict = String(
            decoding: try OpenSSLTool.run(["verify", "-no_check_time", "-CAfile", file.path, file.path]),
            as: UTF8.self
        )
        #expect(verdict.contains("OK"))
    }

    @Test("dates from 2050 on (GeneralizedTime) and long ago read back exactly")
    func farDates() throws {
        let notBefore = utc("1999-12-31T23:59:59Z")
        let notAfter = utc("2061-03-01T00:00:00Z")
        let certificate = try X509Certificate.selfSigned(
            privateKey: TestKeys.ed25519,
            subject: "Long Lived",
            notBefore: notBefore,
            notAfter: notAfter
        )
        #expect(certificate.notBefore == notBefore)
        #expect(certificate.notAfter == notAfter)
        #expect(certificate.subject == "CN = Long Lived")
    }

    @Test("subject names in slash form are accepted, unknown fields are refused")
    func subjectForms() throws {
        let slash = try X509Certificate.selfSigned(
            privateKey: TestKeys.ecP256,
            subject: "/C=AT/O=Verkehrsverbund Öst/CN=Prüfschlüssel 1",
            notBefore: utc("2026-01-01T00:00:00Z"),
            notAfter: utc("2027-01-01T00:00:00Z")
        )
        #expect(slash.subject == "C = AT, O = Verkehrsverbund Öst, CN = Prüfschlüssel 1")
        do {
            _ = try X509Certificate.selfSigned(
                privateKey: TestKeys.ecP256,
                subject: "CN=x, NOTAFIELD=y",
                notBefore: utc("2026-01-01T00:00:00Z"),
                notAfter: utc("2027-01-01T00:00:00Z")
            )
            Issue.record("an unknown name field was accepted")
        } catch {
            #expect(error.code == .invalidSubjectName)
            #expect(error.message.contains("NOTAFIELD"))
        }
    }

    @Test("bytes that are not one certificate are refused with a reason")
    func invalidCertificates() throws {
        let der = try X509Certificate(pem: Fixtures.text("uic/0080-00007.pem")).der
        #expect(throws: SignatureError.self) { try X509Certificate(der: der + [0]) }
        #expect(throws: SignatureError.self) { try X509Certificate(der: Array(der.dropLast())) }
        #expect(throws: SignatureError.self) { try X509Certificate(der: []) }
        do {
            _ = try X509Certificate(pem: TestKeys.ecP256.publicKey.pem)
            Issue.record("a public key was read as a certificate")
        } catch {
            #expect(error.code == .invalidCertificate)
            #expect(error.cause is OpenSSLError)
        }
    }
}
