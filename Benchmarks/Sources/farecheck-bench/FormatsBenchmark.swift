import FareCore
import Foundation
import Signatures
import TicketFormats
import TrustStore
import Verification

/// `farecheck-bench formats`: bare signature checks, and DOSIPAS, ERA SSB, VDV-KA and UK RSP6 samples from bytes to
/// verdict, each beside `openssl speed` for its algorithm; and what reading the trusted-time floor costs a verdict.
///
/// These figures were printed by on-demand unit tests (`FARECHECK_BENCHMARK=1`) before; speed is measured here,
/// and the unit tests check only that the same inputs give the verdicts these figures are about.
struct FormatsBenchmark {
    /// Seconds of CPU time for each measurement, spread over ``BenchCommand/rounds`` rounds.
    let seconds: Double
    /// Whether to run `openssl speed` beside each figure.
    let compare: Bool
    /// The verification tests' fixtures: the real samples and the key lists that verify them.
    let fixtures: String
    /// Whether to count allocations per verdict only, without timing.
    var allocationsOnly = false
    /// Measures only the figures whose name contains this text; nil for all.
    var only: String?
    /// Where each line's figures go, for `--json` and the allocation gate.
    var figures = FigureLog()

    func run() throws {
        printLine(
            allocationsOnly
                ? "heap allocations per call, on the calling thread, average of \(AllocationCount.calls) calls:"
                : "format throughput per CPU second, one thread, median of \(BenchCommand.rounds) rounds alternating with `openssl speed`, and heap allocations per call:"
        )
        if !allocationsOnly, compare, only == nil || "calibration".contains(only ?? "") {
            printLine(
                "`openssl speed`'s loop on a format's own key, where speed has no figure for the key; first on keys it has:"
            )
            try SameKeyAnchor.calibrate(seconds: seconds)
        }
        try benchFC1()
        try benchSignatures()
        try benchRSAPublicOperation()
        try benchDOSIPAS()
        try benchSSB()
        try benchVDV()
        try benchRSP6()
        if !allocationsOnly, only == nil { try benchTrustedTimeFloor() }
    }

    private func file(_ path: String) throws -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: fixtures + "/" + path) else {
            throw CommandFailure.exit(
                "\(fixtures)/\(path) not found (run from the repository root, or give --fixtures)")
        }
        return Array(data)
    }

    private func measure(
        _ name: String, reference: String?, divisor: Double = 1, sameKey: SameKeyAnchor? = nil,
        combined: (label: String, rate: (Double) -> Double?)? = nil, _ body: () throws -> Void
    ) throws {
        if let only, !name.contains(only) { return }
        let allocations = try AllocationCount.perCall(body)
        var figure = Figure(name: "formats: \(name)", allocationsPerCall: allocations)
        defer { figures.add(figure) }
        if allocationsOnly {
            printLine(BenchCommand.line(name, width: 34, allocations: allocations))
            return
        }
        let anchor: ((Double) -> Double?)? =
            if !compare { nil } else if let combined { combined.rate } else if let sameKey {
                sameKey.rate(seconds:)
            } else {
                reference.map(OpenSSLSpeed.anchor)
            }
        let (rate, bare) = try BenchCommand.compared(seconds: seconds, anchor: anchor, body)
        let base = combined?.label ?? sameKey?.label ?? "openssl speed \(reference ?? "")"
        let label = divisor == 1 ? base : "\(base) ÷ \(Int(divisor))"
        figure.record(rate: rate, reference: reference.map { _ in label }, bare: bare.map { $0 / divisor })
        printLine(
            BenchCommand.line(
                name, width: 34, rate: rate, reference: bare.map { (label, $0 / divisor) }, allocations: allocations))
    }

    /// FC1 QR tickets (text form: base45, inflate, COSE, key, signature, claims, policies), as `verify` measures them.
    private func benchFC1() throws {
        let pss = try pssAnchor()
        for (name, verifier, payload) in try BenchCommand.fc1Verdicts() {
            try measure(
                "FC1 \(name) (QR text form)", reference: BenchCommand.fc1SpeedNames[name],
                sameKey: name == "PS256" ? pss : nil
            ) {
                let holds = try verifier.verify(payload).isValid
                precondition(holds)
            }
        }
    }

    /// RSASSA-PSS with an RSA-2048 key (e = 65537, as the demo PS256 key): `openssl speed` has RSA-2048 with PKCS#1
    /// v1.5 padding only, which skips PSS's mask generation (MGF1, seven SHA-256 blocks) and its second hash.
    private func pssAnchor() throws -> SameKeyAnchor {
        let message = [UInt8](repeating: 0x5A, count: 150)
        let key = try PrivateKey.generate(.rsa(bits: 2048))
        return .pss(
            "OpenSSL loop, RSA-2048 PSS", key: key.publicKey,
            signature: try key.signature(for: message, scheme: .ps256),
            message: message)
    }

    /// `isValidSignature` alone for a 150-byte message (a COSE Sig_structure of a typical FC1 ticket).
    private func benchSignatures() throws {
        let message = [UInt8](repeating: 0x5A, count: 150)
        let cases: [(String, KeyKind, SignatureScheme, String)] = [
            ("signature ES256", .ecP256, .es256, "ecdsap256"),
            ("signature EdDSA", .ed25519, .eddsa, "ed25519"),
            ("signature PS256 (RSA-2048)", .rsa(bits: 2048), .ps256, "rsa2048"),
            ("signature DSA-1024/160 SHA-1", .dsa(bits: 1024, qBits: 160), .dsa(.sha1, .der), "dsa1024"),
            // `openssl speed dsa2048` performs as a 160-bit q; UIC's DSA-2048 keys have a 256-bit q, slower by nature.
            ("signature DSA-2048/256 SHA-256", .dsa(bits: 2048, qBits: 256), .dsa(.sha256, .raw), "dsa2048"),
        ]
        for (name, kind, scheme, reference) in cases {
            let key = try PrivateKey.generate(kind)
            let signature = try key.signature(for: message, scheme: scheme)
            let publicKey = key.publicKey
            let sameKey: SameKeyAnchor? =
                switch scheme {
                case .ps256: .pss("OpenSSL loop, same key, PSS", key: publicKey, signature: signature, message: message)
                case .dsa(.sha256, .raw):
                    .verify(
                        "OpenSSL loop, same key", key: publicKey, signature: SameKeyAnchor.der(raw: signature),
                        message: message, algorithm: .sha256)
                default: nil
                }
            try measure(name, reference: reference, sameKey: sameKey) {
                precondition(publicKey.isValidSignature(signature, for: message, scheme: scheme))
            }
        }
    }

    /// The unpadded RSA public operation of `RSARawPublicKey` (RSP6, VDV-KA) on RSA-2048 and RSA-1024 keys with
    /// e = 65537, beside OpenSSL's own public operation with the same key.
    private func benchRSAPublicOperation() throws {
        for bits in [1024, 2048] {
            guard let key = SameKeyAnchor.rsaKey(bits: bits, exponent: 65537),
                let anchor = SameKeyAnchor.rsaPublic("OpenSSL loop, same key", key: key)
            else { continue }
            let raw = try RSARawPublicKey(key)
            let input = anchor.signature
            try measure("RSA-\(bits) public operation alone", reference: nil, sameKey: anchor) {
                _ = try raw.publicOperation(input)
            }
        }
    }

    /// CTS Strasbourg's DOSIPAS ticket: two ECDSA P-256 checks per verdict, beside `openssl speed ecdsap256` ÷ 2.
    private func benchDOSIPAS() throws {
        let payload = try file("dosipas/cts-ticket.bin")
        let trust = try uicTrust(["uic/uic-publickeys-snapshot.xml", "uic/uic-publickeys-historic.xml"])
        let clock = FixedClock(try Date("2026-02-12T18:47:00Z", strategy: .iso8601))
        let verifier = TicketVerifier(trust: trust, clock: clock)
        try expectValid(try verifier.verify(payload), "the DOSIPAS sample")
        try measure("DOSIPAS, level-2 key known", reference: "ecdsap256", divisor: 2) {
            let holds = try verifier.verify(payload).isValid
            precondition(holds)
        }
        // A new verifier each time: the level-2 key is built from its compressed point, as for a new passenger.
        // OpenSSL has to make that key too: the anchor is speed's check for level 1 and then, for level 2, its
        // loop making a key from a compressed P-256 point for every check.
        let pointKey = try PrivateKey.generate(.ecP256)
        let message = Array(repeating: UInt8(0x5A), count: 150)
        let newPoint = SameKeyAnchor.newPoint(
            "", key: pointKey.publicKey, signature: try pointKey.signature(for: message, scheme: .ecdsa(.sha256, .der)),
            message: message)
        let bothLevels: (Double) -> Double? = { seconds in
            guard let level1 = OpenSSLSpeed.anchor("ecdsap256")(seconds / 2),
                let level2 = newPoint.rate(seconds: seconds / 2)
            else { return nil }
            return 1 / (1 / level1 + 1 / level2)
        }
        try measure(
            "DOSIPAS, level-2 key built", reference: "ecdsap256",
            combined: ("speed ecdsap256 + OpenSSL, key from point", bothLevels)
        ) {
            let holds = try TicketVerifier(trust: trust, clock: clock).verify(payload).isValid
            precondition(holds)
        }
        try measure("DOSIPAS header decode", reference: nil) { _ = try DOSIPASBarcode(decoding: payload) }
        // The content the verdict reads after both checks (FCB rail ticket, dynamic content, the ticket), alone.
        let barcode = try DOSIPASBarcode(decoding: payload)
        let generation = clock.now().addingTimeInterval(300)
        try measure("DOSIPAS content decode", reference: nil) {
            _ = try DOSIPAS.content(of: barcode, at: generation)
        }
    }

    /// SŽ's SSB ticket (DSA 2048/224, SHA-224), its signature check alone, and the same frame signed with a
    /// DSA 2048/160 key (what `openssl speed dsa2048` uses), beside `openssl speed dsa2048`.
    private func benchSSB() throws {
        let payload = try file("ssb/sz-nrt.bin")
        let key = try PublicKey(pem: String(decoding: try file("ssb/sz-1179-key1.pub.pem"), as: UTF8.self))
        var trust = try uicTrust(["uic/uic-publickeys-snapshot.xml"])
        trust.add(TrustedKey(family: .uic, issuer: "1179", keyID: "1", algorithm: nil, publicKey: key))
        let clock = FixedClock(try Date("2022-07-01T10:00:00Z", strategy: .iso8601))
        let verifier = TicketVerifier(trust: trust, clock: clock)
        try expectValid(try verifier.verify(payload), "the SSB sample")
        let signed = Array(payload.prefix(58))
        let signature = Array(payload[58...])
        // `openssl speed dsa2048` has a 160-bit q; SŽ's key a 224-bit one: its own key is the anchor.
        let sameKey = SameKeyAnchor.verify(
            "OpenSSL loop, SŽ's key", key: key, signature: SameKeyAnchor.der(raw: signature), message: signed,
            algorithm: .sha224)
        try measure("SSB, SŽ's DSA 2048/224 key", reference: "dsa2048", sameKey: sameKey) {
            let holds = try verifier.verify(payload).isValid
            precondition(holds)
        }
        try measure("SSB signature check alone", reference: "dsa2048", sameKey: sameKey) {
            precondition(key.isValidSignature(signature, for: signed, scheme: .dsa(.sha224, .raw)))
        }
        // OpenSSL 3 makes 2048-bit DSA keys with a 224- or 256-bit q unless asked for FIPS 186-2 parameters.
        guard let openssl = findTool("openssl"),
            let pem = runTool(
                "/bin/sh",
                [
                    "-c",
                    "\(openssl) genpkey -genparam -algorithm DSA -pkeyopt dsa_paramgen_bits:2048 "
                        + "-pkeyopt dsa_paramgen_q_bits:160 -pkeyopt type:fips186_2 | \(openssl) genpkey -paramfile /dev/stdin",
                ]),
            let key160 = try? PrivateKey(pem: pem)
        else {
            printLine("  SSB with a DSA 2048/160 key: no openssl to make the key")
            return
        }
        let signature160 = try key160.signature(for: signed, scheme: .dsa(.sha1, .raw))
        let payload160 = signed + signature160 + [UInt8](repeating: 0, count: 56 - signature160.count)
        var trust160 = TrustSnapshot()
        trust160.add(TrustedKey(family: .uic, issuer: "1179", keyID: "1", algorithm: nil, publicKey: key160.publicKey))
        let verifier160 = TicketVerifier(trust: trust160, clock: clock)
        try expectValid(try verifier160.verify(payload160), "the SSB sample signed with a DSA 2048/160 key")
        try measure("SSB, a DSA 2048/160 key", reference: "dsa2048") {
            let holds = try verifier160.verify(payload160).isValid
            precondition(holds)
        }
    }

    /// VRR's Deutschland-Ticket (VDV-KA; its issuer key has e = 0x40000081, twice the multiplications of
    /// `openssl speed`'s 65537), warm and with the issuer certificate recovered every time.
    private func benchVDV() throws {
        let payload = try file("vdv/vrr-deutschlandticket-2023-03.bin")
        let root = try VDVCertificateImport.root(try file("vdv/certs/4555564456100106.vdv-cert"))
        var authorities = VDVCertificateSet([root])
        let names = (try? FileManager.default.contentsOfDirectory(atPath: fixtures + "/vdv/certs")) ?? []
        for name in names.sorted() where name.hasSuffix(".vdv-cert") && name != "4555564456100106.vdv-cert" {
            authorities.add(
                try VDVCertificateImport.subCA(try file("vdv/certs/" + name), root: root, trustUnsigned: true))
        }
        let verifier = TicketVerifier(
            trust: TrustSnapshot(), clock: FixedClock(try Date("2023-03-15T12:00:00Z", strategy: .iso8601)),
            vdvCertificates: authorities)
        try expectValid(try verifier.verify(payload), "the VDV-KA sample")
        // The issuer key is RSA-1024 with e = 0x40000081 (`openssl speed rsa1024` has e = 65537: half the
        // multiplications); the anchor is the public operation with a key of that size and exponent.
        let sameKey = SameKeyAnchor.rsaKey(bits: 1024, exponent: 0x4000_0081).flatMap {
            SameKeyAnchor.rsaPublic("OpenSSL loop, RSA-1024 e=0x40000081", key: $0)
        }
        try measure("VDV-KA (VRR sample), warm cache", reference: "rsa1024", sameKey: sameKey) {
            let holds = try verifier.verify(payload).isValid
            precondition(holds)
        }
        guard let cache = verifier.vdvCertificateCache else { return }
        try measure("VDV-KA (VRR sample), cold cache", reference: "rsa1024") {
            cache.removeAll()
            let holds = try verifier.verify(payload).isValid
            precondition(holds)
        }
    }

    /// The real UK RSP6 ticket `TTDNQL4XHVK` with TT's published keys (RSA-1024, e = 65537): both keys as imported
    /// (the verifier tries the key that recovered the issuer's last ticket first: one public operation), and the
    /// recovering key alone, each beside `openssl speed rsa1024`.
    private func benchRSP6() throws {
        let payload = try file("rsp6/tt-dnql4xhvk.txt")
        let keys = try RSP6KeyFile.keys(parsing: try file("rsp6/TT.json"), issuer: "TT").map {
            try RSP6KeyImport.trustedKey($0)
        }
        let clock = FixedClock(try Date("2022-12-28T12:00:00Z", strategy: .iso8601))
        var both = TrustSnapshot()
        for key in keys { both.add(key) }
        var second = TrustSnapshot()
        second.add(keys[1])
        let verifier = TicketVerifier(trust: both, clock: clock)
        let direct = TicketVerifier(trust: second, clock: clock)
        try expectValid(try verifier.verify(payload), "the RSP6 sample")
        try expectValid(try direct.verify(payload), "the RSP6 sample with its key alone")
        try measure("RSP6 (TT sample), TT's two keys", reference: "rsa1024") {
            let holds = try verifier.verify(payload).isValid
            precondition(holds)
        }
        try measure("RSP6 (TT sample), its key alone", reference: "rsa1024") {
            let holds = try direct.verify(payload).isValid
            precondition(holds)
        }
        let barcode = try RSP6Barcode(parsing: payload)
        try measure("RSP6 text → RSA input (base 26)", reference: nil) { _ = try RSP6Barcode(parsing: payload) }
        let raw = try RSARawPublicKey(keys[1].publicKey)
        let input = barcode.rsaInput(byteCount: raw.modulusByteCount)!
        let recovered = try raw.publicOperation(input)
        let inside = RSP6Padding.unpad(recovered)!.payload
        // The RSA public operation alone, to tell its cost from the rest of the verdict's.
        try measure("RSP6 RSA public operation alone", reference: "rsa1024") {
            _ = try raw.publicOperation(zeroPaddedPrefix: barcode.block)
        }
        try measure("RSP6 bit field → ticket", reference: nil) { _ = try RSP6Ticket(decoding: inside) }
    }

    /// `trustedTimeFloor()` against `StoreTrust`'s revocation look-up (which every verdict makes too), per call.
    private func benchTrustedTimeFloor() throws {
        try withTemporaryStore { store in
            try benchTrustedTimeFloor(store)
        }
    }

    private func benchTrustedTimeFloor(_ store: TrustStore) throws {
        try store.raiseTrustedTimeFloor(
            to: FarecheckRelease.date.addingTimeInterval(86_400), source: .keyBundle,
            wallClock: FarecheckRelease.date.addingTimeInterval(86_400), tolerance: 300)
        try store.revokeTickets(
            (0..<10_000).map {
                TicketRevocationRecord(
                    issuer: "demo-transit", ticketID: TicketID(withUnsafeBytes(of: $0) { Array($0) }), reason: nil)
            })
        let trust = StoreTrust(store: store)
        let floor = try BenchCommand.rate(seconds: seconds / Double(BenchCommand.rounds)) {
            let holds = try store.trustedTimeFloor() != nil
            precondition(holds)
        }
        let revocation = try BenchCommand.rate(seconds: seconds / Double(BenchCommand.rounds)) {
            let holds = try trust.revocation(ofTicket: [1, 2, 3, 4, 5, 6, 7, 8], issuer: "demo-transit") == nil
            precondition(holds)
        }
        printLine(
            String(
                format: "  trusted-time floor read: %.2f µs per verdict; revocation look-up: %.2f µs", 1e6 / floor,
                1e6 / revocation))
    }

    /// UIC key lists as an inspector holds them after `farecheck keys import --uic-xml`, in memory.
    private func uicTrust(_ lists: [String]) throws -> TrustSnapshot {
        try withTemporaryStore { store in
            for list in lists { _ = try store.importUICKeyList(try UICKeyList.parse(xml: try file(list))) }
            return try store.snapshot().trust
        }
    }

    /// A store in a directory of its own, removed afterwards.
    private func withTemporaryStore<T>(_ body: (TrustStore) throws -> T) throws -> T {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("farecheck-bench-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try TrustStore(path: directory + "/store.sqlite")
        defer { try? store.close() }
        return try body(store)
    }

    private func expectValid(_ verdict: Verdict, _ what: String) throws {
        guard verdict.isValid else {
            throw CommandFailure.exit("\(what) verifies \(verdict.kind): \(verdict.reason)")
        }
    }
}
