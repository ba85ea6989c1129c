import FareCore
import Foundation
import Issuing
import Signatures
import TicketFormats
import TrustStore
import Verification

/// UIC figures: verify throughput for DSA keys beside `openssl speed`, and the time to import the key list.
struct UICBenchmark {
    var seconds: Double
    var compare: Bool
    var keyList: String
    /// Measures only the figures whose name contains this text; nil for all.
    var only: String? = nil

    func run() throws {
        printLine(
            "UIC 918.3 verify throughput per CPU second, one thread (payload → verdict: header, inflate, records, signature, policies), median of \(BenchCommand.rounds) rounds alternating with `openssl speed`:"
        )
        let cases: [(String, KeyKind, DigestAlgorithm, Int, String?)] = [
            ("DSA-1024/160 SHA-1, v1", .dsa(bits: 1024, qBits: 160), .sha1, 1, "dsa1024"),
            // `openssl speed dsa2048` uses a 160-bit q; UIC's 2048-bit keys have a 256-bit q, a third slower.
            // Compared with `openssl speed`'s loop on the same key (`SameKeyAnchor`).
            ("DSA-2048/256 SHA-256, v2", .dsa(bits: 2048, qBits: 256), .sha256, 2, nil),
            ("ECDSA P-256 SHA-256, v2", .ecP256, .sha256, 2, "ecdsap256"),
        ]
        let from = UICDay(year: 2026, month: 1, day: 1)!
        let until = UICDay(year: 2099, month: 12, day: 31)!
        for (name, kind, hash, version, referenceName) in cases where only.map({ name.contains($0) }) ?? true {
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
            let message = [UInt8](repeating: 0x5A, count: 150)
            let sameKey: SameKeyAnchor? =
                referenceName == nil
                ? .verify(
                    "OpenSSL loop, same key", key: key.publicKey,
                    signature: try key.signature(for: message, scheme: scheme), message: message, algorithm: hash)
                : nil
            let anchor: ((Double) -> Double?)? =
                if !compare { nil } else if let sameKey { sameKey.rate(seconds:) } else {
                    referenceName.map(OpenSSLSpeed.anchor)
                }
            let (rate, bare) = try BenchCommand.compared(seconds: seconds, anchor: anchor) {
                let verdict = try verifier.verify(payload)
                precondition(verdict.isValid)
            }
            let label = sameKey?.label ?? "openssl speed \(referenceName ?? "")"
            printLine(BenchCommand.line(name, width: 26, rate: rate, reference: bare.map { (label, $0) }))
            // farecheck's own check of the same signature, alone: what the verdict costs beside it, whatever the
            // check costs beside OpenSSL's (DSA keys check with tables of their powers, `DSAFixedBase`).
            let container = try UICContainer(parsing: payload)
            // As the container carries it: DER, or r ‖ s where the DER form would not fit its field.
            let encoding: SignatureEncoding = container.signatureForm == .der ? .der : .raw
            let carried: SignatureScheme = kind == .ecP256 ? .ecdsa(hash, encoding) : .dsa(hash, encoding)
            let check = try BenchCommand.rate(seconds: seconds / 2) {
                let holds = key.publicKey.isValidSignature(
                    container.signature, for: container.signedData, scheme: carried)
                precondition(holds)
            }
            printLine(
                "    its signature check alone: \(String(format: "%.0f", check))/s; the verdict is "
                    + String(
                        format: "%.0f %% of it (%.1f µs beside it)", rate / check * 100, (1 / rate - 1 / check) * 1e6))
        }
        if only == nil || "DB v1 with U_FLEX".contains(only ?? "") { try benchFlex() }
        if only == nil { try benchImport() }
    }

    /// DB's sample tickets with U_FLEX: the FCB decode alone per record, and a v1 ticket (DSA-1024, SHA-1) with
    /// its real U_HEAD, U_TLAY and U_FLEX records, payload → verdict, beside `openssl speed dsa1024`.
    private func benchFlex() throws {
        let directory = "Tests/Fixtures/uic-918-9-db"
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else {
            printLine("  U_FLEX: \(directory) not found (run from the repository root)")
            return
        }
        var records: [(name: String, record: UICRecord, container: UICContainer)] = []
        for name in names.sorted() where name.hasSuffix(".bin") {
            guard let bytes = FileManager.default.contents(atPath: directory + "/" + name),
                let container = try? UICContainer(parsing: Array(bytes)),
                let record = container.record(UICFlex.recordID)
            else { continue }
            records.append((name, record, container))
        }
        var medians: [Double] = []
        for (_, record, _) in records {
            guard let version = FCBVersion(uflexRecordVersion: record.version) else { continue }
            var times: [Double] = []
            for _ in 0..<2_000 {
                let started = ContinuousClock.now
                _ = try FCBTicket(decoding: record.body, version: version)
                let elapsed = started.duration(to: .now)
                times.append(Double(elapsed.components.attoseconds) / 1e12 + Double(elapsed.components.seconds) * 1e6)
            }
            times.sort()
            medians.append(times[times.count / 2])
        }
        medians.sort()
        printLine(
            "  FCB decode (FCBTicket, \(medians.count) DB U_FLEX records, 2,000 each): median per record "
                + String(
                    format: "%.1f µs (records from %.1f to %.1f µs)", medians[medians.count / 2],
                    medians.first ?? 0, medians.last ?? 0))

        // A v1 DB ticket's own records, signed again with a DSA-1024 key of ours (DB's private key is DB's).
        guard let sample = records.first(where: { $0.container.version == 1 }) else { return }
        let key = try PrivateKey.generate(.dsa(bits: 1024, qBits: 160))
        let payload = try UIC918_3.encode(
            records: sample.container.records, version: 1, issuerCode: "1080", keyID: "00042"
        ) {
            try key.signature(for: $0, scheme: .dsa(.sha1, .der))
        }
        var trust = TrustSnapshot()
        trust.add(TrustedKey(family: .uic, issuer: "1080", keyID: "42", algorithm: nil, publicKey: key.publicKey))
        let ticket = try UIC918_3.ticket(from: try UICContainer(parsing: payload))
        let inside = ticket.validFrom.map { $0.addingTimeInterval(60) } ?? Date()
        let verifier = TicketVerifier(trust: trust, clock: FixedClock(inside))
        let verdict = try verifier.verify(payload)
        guard verdict.kind == .valid else {
            throw CommandFailure.exit(
                "bench: the U_FLEX ticket \(sample.name) verifies \(verdict.kind): \(verdict.reason)")
        }
        let (rate, bare) = try BenchCommand.compared(seconds: seconds, reference: compare ? "dsa1024" : nil) {
            let verdict = try verifier.verify(payload)
            precondition(verdict.isValid)
        }
        printLine(
            BenchCommand.line(
                "DB v1 with U_FLEX", width: 26, rate: rate, reference: bare.map { ("openssl speed dsa1024", $0) }))
        // Where a verdict's time goes, per step, on the same ticket.
        let container = try UICContainer(parsing: payload)
        let steps: [(String, () throws -> Void)] = [
            ("container (header, inflate, records)", { _ = try UICContainer(parsing: payload) }),
            ("mapping (U_HEAD, U_TLAY, U_FLEX → Ticket)", { _ = try UIC918_3.ticket(from: container) }),
            ("FCB decode alone", { _ = try UICFlex.ticket(record: container.record(UICFlex.recordID)!) }),
            ("U_TLAY decode alone", { _ = try UICLayout(record: container.record(UICLayout.recordID)!) }),
            // An issuer quirk on the slow path: the byte reading fails first, then the character reading is taken.
            ("U_TLAY decode, lengths in characters", { _ = try UICLayout(record: Self.layoutInCharacters) }),
        ]
        for (name, step) in steps {
            let started = ContinuousClock.now
            for _ in 0..<5_000 { try step() }
            let micros =
                Double(started.duration(to: .now).components.attoseconds) / 1e12 / 5_000
                + Double(started.duration(to: .now).components.seconds) * 1e6 / 5_000
            printLine("    \(name): \(String(format: "%.1f", micros)) µs")
        }
    }

    /// A U_TLAY record whose text lengths count characters (`København H` as 11, not 12 bytes), as DSB writes them:
    /// the 13 fields of an RCT2 ticket, every third with a Danish or Swedish letter.
    static let layoutInCharacters: UICRecord = {
        var body = Array("RCT20013".utf8)
        for index in 0..<13 {
            let text = index % 3 == 0 ? "København H – Malmö C" : "Ordinaer billet \(index)"
            let numbers = String(format: "%02d%02d01%02d0%04d", index, index % 2 * 36, 36, text.unicodeScalars.count)
            body += Array(numbers.utf8) + Array(text.utf8)
        }
        return UICRecord(id: UICLayout.recordID, version: "01", body: body)
    }()

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
