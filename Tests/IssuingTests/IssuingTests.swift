import FareCore
import Foundation
import Issuing
import Signatures
import Symbols
import TestSupport
import Testing
import TicketFormats
import Verification

/// Tickets issued with the demo keys, judged as a validator judges them, and the issuing key files.
@Suite("Issuing FC1 tickets")
struct IssuingTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static func claims(product: String = "day") -> FC1.Claims {
        FC1.Claims(
            issuer: "demo-transit", ticketID: [0x5c, 0xa1, 0x0e], issuedAt: now - 600, validFrom: now - 600,
            validUntil: now + 3600, product: product, zones: ["A"], holder: "ID ****1234")
    }

    /// A verifier at `now` that trusts the published public half of a demo key (`Keys/NAME.pub.pem`).
    static func verifier(trusting key: IssuingKey, file: String) throws -> TicketVerifier {
        let name = file.replacingOccurrences(of: ".key", with: "")
        let pem = try String(contentsOfFile: "\(repositoryRoot)/Keys/\(name).pub.pem", encoding: .utf8)
        var trust = TrustSnapshot()
        trust.add(
            TrustedKey(
                family: .fc1, issuer: "demo-transit", keyID: KeyID(key.keyID.hexString), algorithm: key.algorithm.name,
                publicKey: try PublicKey(pem: pem)))
        return TicketVerifier(trust: trust, clock: FixedClock(now))
    }

    @Test("a ticket issued with each demo key, as QR text or Aztec bytes, is valid with the key's published half")
    func demoKeysIssueValidTickets() throws {
        #expect(DemoKeys.issuingKeys.map(\.algorithm) == ["ES256", "EdDSA", "PS256"])
        for demo in DemoKeys.issuingKeys {
            let key = try IssuingKey.parse(demo.text, source: demo.file)
            #expect(key.issuer == "demo-transit" && key.algorithm.name == demo.algorithm)
            let verifier = try Self.verifier(trusting: key, file: demo.file)
            for barcode in BarcodeKind.allCases {
                let payload = try key.payload(for: Self.claims(), barcode: barcode)
                #expect(barcode == .aztec || payload.starts(with: Array("FC1:".utf8)), "\(demo.file)")
                let verdict = try verifier.verify(payload)
                #expect(verdict.kind == .valid, "\(demo.file) \(barcode): \(verdict.reason)")
                #expect(verdict.signature == .valid && verdict.format == .fc1)
                #expect(verdict.keyID == KeyID(key.keyID.hexString) && verdict.issuer == "demo-transit")
                #expect(verdict.ticket?.product == "day" && verdict.ticket?.holder == "ID ****1234")
            }
        }
    }

    @Test("a ticket changed after issuing, or issued with another key under the same kid, is an invalid signature")
    func alteredTicketsAreRefused() throws {
        let demo = DemoKeys.issuingKeys[0]
        let key = try IssuingKey.parse(demo.text, source: demo.file)
        let verifier = try Self.verifier(trusting: key, file: demo.file)
        let cose = try COSESign1.sign(
            algorithm: key.algorithm, keyID: key.keyID, payload: Self.claims().encoded(), sign: key.sign)
        var altered = cose
        let product = try #require(altered.firstRange(of: Array("day".utf8)))
        altered[product.upperBound - 1] = UInt8(ascii: "x")
        let verdict = try verifier.verify(FC1.encode(cose: altered, transport: .zlib))
        #expect(verdict.kind == .invalidSignature && verdict.ticket == nil, "\(verdict.reason)")

        var impostor = key
        impostor.privateKey = try PrivateKey.generate(.ecP256)
        let forged = try verifier.verify(try impostor.payload(for: Self.claims(), barcode: .qr))
        #expect(forged.kind == .invalidSignature, "\(forged.reason)")
    }

    @Test("an issued ticket rendered as a barcode reads back as the same payload")
    func renderedBarcodesReadBack() throws {
        let demo = DemoKeys.issuingKeys[1]
        let key = try IssuingKey.parse(demo.text, source: demo.file)
        let scanner = SymbolScanner()
        for (barcode, symbology) in [(BarcodeKind.qr, Symbology.qr), (.aztec, .aztec)] {
            let payload = try key.payload(for: Self.claims(), barcode: barcode)
            let symbols = scanner.scan(try barcode.image(payload, moduleSize: 4))
            #expect(symbols.map(\.symbology) == [symbology])
            #expect(symbols.first?.bytes == payload, "\(barcode)")
        }
    }

    @Test("a key file written and read back is the same key, readable by its owner only")
    func keyFileRoundTrip() throws {
        let bench = Workbench()
        for (kind, algorithm) in [(KeyKind.ecP256, COSEAlgorithm.es256), (.ed25519, .edDSA)] {
            let privateKey = try PrivateKey.generate(kind)
            let key = IssuingKey(
                privateKey: privateKey, issuer: "north-line", keyID: [0x01, 0x02, 0x03, 0x04], algorithm: algorithm)
            let path = bench.path("\(algorithm.name).key")
            try key.write(to: path)
            let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber
            #expect(mode?.intValue == 0o600)
            let text = try String(contentsOfFile: path, encoding: .utf8)
            #expect(text.hasPrefix("# farecheck issuing key\n# issuer: north-line\n# kid: 01020304\n"))
            let read = try IssuingKey.load(from: path)
            #expect(read.issuer == "north-line" && read.keyID == [1, 2, 3, 4] && read.algorithm == algorithm)
            #expect(read.privateKey.publicKey == privateKey.publicKey)
        }
    }

    @Test("a bare private key file signs too: its kid from its public key, its algorithm from its kind")
    func bareKeyFile() throws {
        let privateKey = try PrivateKey.generate(.ed25519)
        let key = try IssuingKey.parse(try privateKey.pemPKCS8, source: "bare.pem")
        #expect(key.issuer == nil && key.algorithm == .edDSA)
        #expect(key.keyID == IssuingKey.keyID(forSPKI: privateKey.publicKey.spkiDER))
        #expect(key.keyID == Array(digest(.sha256, privateKey.publicKey.spkiDER).prefix(8)))
    }

    @Test("key files that cannot issue are refused with the file named and why")
    func unusableKeyFiles() throws {
        let bench = Workbench()
        let missing = bench.path("absent.key")
        #expect(loadError(missing) == "\(missing): no such file")

        let notAKey = bench.path("notes.key")
        try Data("# kid: 0102\nnot a key at all\n".utf8).write(to: URL(fileURLWithPath: notAKey))
        #expect(loadError(notAKey)?.hasPrefix("\(notAKey): not a private key file (") == true)

        let p384 = bench.path("p384.key")
        let made = try bench.shell(
            "openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-384 -out '\(p384)' 2>&1")
        #expect(made.status == 0, "\(made.text)")
        let refused = try #require(loadError(p384))
        #expect(refused.hasPrefix("\(p384): a ") && refused.hasSuffix(" key cannot sign FC1 tickets"), "\(refused)")
    }

    @Test("the demo keys embedded in the binary are the files in Keys/, and each file's public half is its key's")
    func demoKeysMatchFiles() throws {
        let bench = Workbench()
        #expect(
            DemoKeys.issuingKeys.map(\.file) == [
                "demo-transit-es256.key", "demo-transit-eddsa.key", "demo-transit-ps256.key",
            ])
        for demo in DemoKeys.issuingKeys {
            let file = try String(contentsOfFile: "\(repositoryRoot)/Keys/\(demo.file)", encoding: .utf8)
            #expect(demo.text == file, "\(demo.file)")
            let name = demo.file.replacingOccurrences(of: ".key", with: "")
            let pub = try bench.shell("openssl pkey -in '\(repositoryRoot)/Keys/\(demo.file)' -pubout").text
            #expect(pub == (try String(contentsOfFile: "\(repositoryRoot)/Keys/\(name).pub.pem", encoding: .utf8)))
        }
    }

    /// The message `IssuingKey.load` refuses the file at `path` with; `nil`, recorded as an issue, when it loads.
    private func loadError(_ path: String) -> String? {
        do {
            _ = try IssuingKey.load(from: path)
            Issue.record("loaded: \(path)")
            return nil
        } catch {
            return error.message
        }
    }
}
