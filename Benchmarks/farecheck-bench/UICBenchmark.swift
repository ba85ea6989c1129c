import Issuing
import FareCore
import Foundation
import Signatures
import TicketFormats
import TrustStore
import Verification

/// UIC figures: verify throughput for DSA keys beside `openssl speed`, and the time to import the key list.
struct UICBenchmark {
    var seconds: Double
    var compare: Bool
    var keyList: String

    func run() throws {
        printLine(
            "UIC 918.3 verify throughput per CPU second, one thread (payload → verdict: header, inflate, records, signature, policies), median of \(BenchCommand.rounds) rounds alternating with `openssl speed`:"
        )
        let cases: [(String, KeyKind, DigestAlgorithm, Int, String?)] = [
            ("DSA-1024/160 SHA-1, v1", .dsa(bits: 1024, qBits: 160), .sha1, 1, "dsa1024"),
            // `openssl speed dsa2048` uses a 160-bit q; UIC's 2048-bit keys have a 256-bit q, a third slower.
            ("DSA-2048/256 SHA-256, v2", .dsa(bits: 2048, qBits: 256), .sha256, 2, "dsa2048"),
            ("ECDSA P-256 SHA-256, v2", .ecP256, .sha256, 2, nil),
        ]
        let from = UICDay(year: 2026, month: 1, day: 1)!
        let until = UICDay(year: 2099, month: 12, day: 31)!
        for (name, kind, hash, version, referenceName) in cases {
            let key: PrivateKey
            do {
                key = try PrivateKey.generate(kind)
            } catch {
                printLine("  \(name): cannot generate the key here (\(error.message))")
                continue
            }
            let scheme: SignatureScheme = kind == .ecP256 ? .ecdsa(hash, .der) : .dsa(hash, .der)
            let head = UICHead(issuerCode: "1080", ticketKey: "BENCH0001", issuedAt: Date())
            let bl = UIC0080BL(
                validityBlocks: [.init(firstDay: from, lastDay: until, serial: "0000000001")],
                fields: [
                    .init(tag: 1, value: "Flexpreis"), .init(tag: 15, value: "Mainz"), .init(tag: 16, value: "Kassel"),
                    .init(tag: 31, value: from.description), .init(tag: 32, value: until.description),
                ]
            )
            let payload = try UIC918_3.encode(
                records: [head.record(), bl.record()], version: version, issuerCode: "1080", keyID: "00042"
            ) {
                try key.signature(for: $0, scheme: scheme)
            }
            var trust = TrustSnapshot()
            trust.add(
                TrustedKey(
                    family: .uic, issuer: "1080", keyID: "42", algorithm: nil, publicKey: key.publicKey))
            let verifier = TicketVerifier(trust: trust)
            guard (try? verifier.verify(payload))?.kind == .valid else {
                throw CommandFailure.exit("bench: the \(name) ticket does not verify")
            }
            let (rate, bare) = try BenchCommand.compared(seconds: seconds, reference: compare ? referenceName : nil) {
                let verdict = try verifier.verify(payload)
                precondition(verdict.isValid)
            }
            printLine(
                BenchCommand.line(
                    name, width: 26, rate: rate, reference: bare.map { ("openssl speed \(referenceName ?? "")", $0) }))
        }
        try benchImport()
    }

    private func benchImport() throws {
        guard let xml = FileManager.default.contents(atPath: keyList) else {
            printLine("  key list import: \(keyList) not found (run from the repository root, or give --uic-key-list)")
            return
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("farecheck-bench-uic-\(getpid())")
            .path
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var times: [Double] = []
        var parseTimes: [Double] = []
        var count = 0
        for run in 0..<10 {
            let store: TrustStore
            do {
                store = try TrustStore(path: "\(directory)/store-\(run).sqlite")
            } catch {
                throw CommandFailure.exit(error.description)
            }
            let start = ContinuousClock.now
            let list = try UICKeyList.parse(xml: Array(xml))
            parseTimes.append(ScanBenchmark.milliseconds(ContinuousClock.now - start))
            let report = try store.importUICKeyList(list)
            times.append(ScanBenchmark.milliseconds(ContinuousClock.now - start))
            count = report.added
        }
        printLine(
            "  key list import (\(count) keys: parse XML, read certificates, one transaction to a new store): median \(ScanBenchmark.median(times)) ms of 10, of which XML parsing \(ScanBenchmark.median(parseTimes)) ms; the rest is certificates and the durable (fsync) commit"
        )
    }
}
