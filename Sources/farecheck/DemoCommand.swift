import ArgumentParser
import Daemon
import FareCore
import Foundation
import Issuing
import Presentation
import Signatures
import Symbols
import TicketFormats
import TrustStore
import Verification

/// `farecheck demo`: the whole path on embedded defaults, with no hardware and no files needed.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Run the bench pipeline on demo tickets: issue, render, scan, verify (no hardware needed).",
        discussion: """
            Creates a store with the embedded demo keys of issuer demo-transit (or uses --db), issues \
            demo tickets (valid ones for each algorithm, expired, not yet valid, revoked, forged, \
            tampered), renders each as a QR or Aztec PNG in --out, scans the images back and prints \
            each verdict beside the one expected. Exit status 0 when every verdict is as expected.
            """
    )

    @Option(help: "Directory for the ticket images and the demo store (default: a new temporary directory).")
    var out: String?
    @Option(help: "Use this store instead of a new one in --out (the demo keys are added to it).")
    var db: String?
    @Flag(help: "One JSON object per line per ticket.") var json = false

    struct Case {
        var name: String
        var barcode: BarcodeKind
        var expected: VerdictKind
        var payload: [UInt8]
    }

    func run() throws {
        let directory =
            out ?? FileManager.default.temporaryDirectory.appendingPathComponent("farecheck-demo-\(getpid())").path
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw CommandFailure.exit("cannot create \(directory): \(error)")
        }
        let storePath = db ?? directory + "/demo.sqlite"
        let (trustStore, cases) = try Self.prepare(directory: directory, storePath: storePath)
        if !json {
            printLine("farecheck demo: store \(storePath), images in \(directory)")
        }
        let verifier = try VerificationOptions.verifier(store: trustStore)
        let scanner = SymbolScanner()
        var mismatches = 0
        for demoCase in cases {
            let path = "\(directory)/\(demoCase.name).png"
            let symbols: [DecodedSymbol]
            do {
                symbols = try scanner.scan(fileAtPath: path)
            } catch {
                throw CommandFailure.exit(readable(error))
            }
            guard let symbol = symbols.first else {
                printLine("\(demoCase.name): no barcode found in \(path)")
                mismatches += 1
                continue
            }
            let verdict: Verdict
            do {
                verdict = try verifier.verify(symbol.bytes)
            } catch {
                throw CommandFailure.exit(error.description)
            }
            let asExpected = verdict.kind == demoCase.expected && symbol.bytes == demoCase.payload
            if !asExpected { mismatches += 1 }
            if json {
                var report = VerdictEvent.report(
                    Inspection(
                        source: SourceName(path), symbology: symbol.symbology, payloadByteCount: symbol.bytes.count,
                        payloadDigest: digest(.sha256, symbol.bytes), verdict: verdict))
                report.expected = demoCase.expected.rawValue
                printLine(jsonLine(report))
            } else {
                let name = demoCase.name.padding(toLength: 18, withPad: " ", startingAt: 0)
                let kind = verdict.kind.rawValue.padding(toLength: 18, withPad: " ", startingAt: 0)
                printLine(
                    "\(asExpected ? "ok  " : "FAIL") \(name) \(demoCase.barcode.rawValue.padding(toLength: 6, withPad: " ", startingAt: 0)) \(kind) \(verdict.reason)"
                )
            }
        }
        if !json {
            printLine(
                mismatches == 0
                    ? "All \(cases.count) verdicts as expected."
                    : "\(mismatches) of \(cases.count) verdicts not as expected.")
        }
        if mismatches > 0 { throw ExitCode(1) }
    }

    /// Creates (or opens) the store at `storePath` with the embedded demo keys, issues the demo tickets and
    /// renders each as `<name>.png` in `directory`. `farecheck daemon --demo` feeds the same images.
    static func prepare(directory: String, storePath: String) throws -> (TrustStore, [Case]) {
        let trustStore: TrustStore
        do {
            // The demo makes its store; it verifies without journaling, so no journal is made.
            trustStore = try TrustStore(path: storePath, ifMissing: .create, journal: .usesExisting)
        } catch {
            throw CommandFailure.exit(error.description)
        }
        var keys: [IssuingKey] = []
        for demo in DemoKeys.issuingKeys {
            let key: IssuingKey
            do {
                key = try IssuingKey.parse(demo.text, source: demo.file)
            } catch {
                throw CommandFailure.exit(error.message)
            }
            keys.append(key)
            do {
                try trustStore.saveKey(
                    KeyRecord(
                        family: .fc1, issuer: IssuerID(key.issuer ?? "demo-transit"), keyID: KeyID(key.keyID.hexString),
                        algorithm: key.algorithm.name, spki: key.privateKey.publicKey.spkiDER, source: "demo"
                    ))
            } catch {
                throw CommandFailure.exit(error.description)
            }
        }
        let cases = try makeCases(keys: keys, store: trustStore)
        for demoCase in cases {
            try demoCase.barcode.render(demoCase.payload, moduleSize: 4, to: "\(directory)/\(demoCase.name).png")
        }
        return (trustStore, cases)
    }

    private static func makeCases(keys: [IssuingKey], store: TrustStore) throws -> [Case] {
        let now = Date()
        func claims(_ id: UInt8, from: TimeInterval, until: TimeInterval, product: String = "day") -> FC1.Claims {
            FC1.Claims(
                issuer: "demo-transit", ticketID: [0xDE, 0x30, id], issuedAt: now.addingTimeInterval(min(from, 0)),
                validFrom: now.addingTimeInterval(from), validUntil: now.addingTimeInterval(until), product: product,
                zones: ["A", "B"], category: "adult", holder: "ID ****1234"
            )
        }
        var cases: [Case] = []
        for (index, key) in keys.enumerated() {
            let barcode: BarcodeKind = index % 2 == 0 ? .qr : .aztec
            cases.append(
                Case(
                    name: "valid-\(key.algorithm.name.lowercased())", barcode: barcode, expected: .valid,
                    payload: try key.checkedPayload(
                        for: claims(UInt8(index), from: -600, until: 86400), barcode: barcode)))
        }
        let es256 = keys[0]
        cases.append(
            Case(
                name: "expired", barcode: .qr, expected: .expired,
                payload: try es256.checkedPayload(for: claims(0x10, from: -2 * 86400, until: -86400), barcode: .qr)))
        cases.append(
            Case(
                name: "not-yet-valid", barcode: .aztec, expected: .notYetValid,
                payload: try es256.checkedPayload(for: claims(0x11, from: 86400, until: 2 * 86400), barcode: .aztec)))
        let revoked = claims(0x12, from: -600, until: 86400, product: "month")
        do {
            try store.revokeTicket(
                TicketRevocationRecord(
                    issuer: IssuerID(revoked.issuer), ticketID: TicketID(revoked.ticketID), reason: "reported stolen"))
        } catch {
            throw CommandFailure.exit(error.description)
        }
        cases.append(
            Case(
                name: "revoked", barcode: .qr, expected: .revoked,
                payload: try es256.checkedPayload(for: revoked, barcode: .qr)))
        // A forger with a key of their own who copies the demo key id.
        let forgerKey: PrivateKey
        do {
            forgerKey = try PrivateKey.generate(.ecP256)
        } catch {
            throw CommandFailure.exit("cannot generate a key: \(readable(error))")
        }
        let forger = IssuingKey(privateKey: forgerKey, issuer: "demo-transit", keyID: es256.keyID, algorithm: .es256)
        cases.append(
            Case(
                name: "forged", barcode: .aztec, expected: .invalidSignature,
                payload: try forger.checkedPayload(for: claims(0x13, from: -600, until: 86400), barcode: .aztec)))
        // A genuine ticket whose product was changed after signing.
        var tampered = try es256.payload(
            for: claims(0x14, from: -600, until: 86400, product: "single"), barcode: .aztec)
        tampered = Self.tamper(tampered)
        cases.append(Case(name: "tampered", barcode: .aztec, expected: .invalidSignature, payload: tampered))
        return cases
    }

    /// Rewrites `single` to `month!` inside the signed claims and re-wraps the message.
    private static func tamper(_ payload: [UInt8]) -> [UInt8] {
        guard var cose = try? Zlib.inflate(payload) else { return payload }
        let needle = Array("single".utf8)
        if let range = cose.firstRange(of: needle) { cose.replaceSubrange(range, with: Array("month!".utf8)) }
        return Zlib.deflate(cose)
    }
}
