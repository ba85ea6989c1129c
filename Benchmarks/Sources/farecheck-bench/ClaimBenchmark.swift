import AsyncHTTPClient
import FareCore
import Foundation
import Issuing
import NIOCore
import NIOHTTP1
import Signatures
import TicketFormats
import ValidationAPI
import ValidationServer
import Verification

/// `farecheck-bench claims`: what backing a first-use claim by its ticket costs the server.
///
/// In process, over one SQLite server store with the demo ES256 key published: the server's claim check
/// (`FirstUseClaimVerifier`: its verifier of the published bundle, the verdict, the single-use and stated-ticket
/// checks) beside a bare `TicketVerifier.verify` of the same tickets, alternating rounds, wall clock, one task. The
/// issue's goal: the check costs at most 20 % above the bare verify (ratio ≥ 83 %). Then over HTTP on loopback:
/// a real `farecheck-server` answering online checks that claim a new single ticket each, one at a time, and the
/// same checks without a claim: p50 and p99.
struct ClaimBenchmark {
    let seconds: Double
    /// Distinct tickets issued (each online claim needs a ticket of its own).
    let tickets = 2000

    func run() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bench-claims-\(getpid())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let demo = DemoKeys.issuingKeys.first { $0.algorithm == "ES256" } ?? DemoKeys.issuingKeys[0]
        let key = try IssuingKey.parse(demo.text, source: demo.file)
        let anchor = try PrivateKey(pem: String(contentsOfFile: "Keys/demo-anchor.key", encoding: .utf8))
        let database = directory + "/server.sqlite"
        let location = StoreLocation.sqlite(path: database)
        try await location.withStore(create: true) { store in
            try await store.putIssuerKey(
                BundleKey(
                    format: "fc1", issuer: "demo-transit", keyID: KeyID(key.keyID.hexString),
                    algorithm: key.algorithm.name,
                    spki: key.privateKey.publicKey.spkiDER),
                at: Date())
            try await store.publishBundle(signedBy: anchor)
        }
        let now = Date()
        let payloads = try (0..<tickets).map { index in
            try key.payload(
                for: FC1.Claims(
                    issuer: "demo-transit", ticketID: withUnsafeBytes(of: UInt64(index).bigEndian, Array.init),
                    issuedAt: now, validFrom: now.addingTimeInterval(-60), validUntil: now.addingTimeInterval(86_400),
                    product: "single", zones: ["A"], category: "adult"),
                barcode: .qr)
        }
        var trust = TrustSnapshot()
        trust.add(
            TrustedKey(
                family: .fc1, issuer: "demo-transit", keyID: KeyID(key.keyID.hexString), algorithm: key.algorithm.name,
                publicKey: key.privateKey.publicKey))
        let bare = TicketVerifier(trust: trust)
        printLine(
            "claims: the server's check of a first-use claim (ES256 FC1 single tickets, in process, SQLite store) "
                + "beside a bare verify of the same tickets, median of \(BenchCommand.rounds) alternating rounds:")
        try await location.withStore(create: false) { store in
            let claims = FirstUseClaimVerifier(store: store, policy: FirstUseClaimPolicy())
            var bareRates: [Double] = []
            var claimRates: [Double] = []
            for _ in 0..<BenchCommand.rounds {
                bareRates.append(
                    try await Self.rate(seconds: seconds / Double(BenchCommand.rounds), payloads) { payload in
                        guard try bare.verify(payload).kind == .valid else {
                            throw CommandFailure.exit("bench: a ticket does not verify")
                        }
                    })
                claimRates.append(
                    try await Self.rate(seconds: seconds / Double(BenchCommand.rounds), payloads) { payload in
                        _ = try await claims.verify(
                            payload: payload, statedFormat: "fc1", statedIssuer: "demo-transit", statedTicketID: nil,
                            usedAt: Date())
                    })
            }
            let bareRate = BenchCommand.median(bareRates)
            let claimRate = BenchCommand.median(claimRates)
            printLine(
                "  bare verify \(BenchCommand.format(bareRate))/s   claim check \(BenchCommand.format(claimRate))/s   "
                    + "ratio \(String(format: "%.0f", claimRate / bareRate * 100)) % (goal: at least 83 %, i.e. at "
                    + "most 20 % more time)")
        }
        try await onlineChecks(database: database, payloads: payloads, directory: directory)
    }

    /// Runs `body` over the payloads, round robin, for `seconds` of wall clock; returns calls per second.
    static func rate(
        seconds: Double, _ payloads: [[UInt8]], _ body: ([UInt8]) async throws -> Void
    ) async throws -> Double {
        for payload in payloads.prefix(50) { try await body(payload) }
        let started = ContinuousClock.now
        let limit = Duration.milliseconds(Int(seconds * 1000))
        var count = 0
        while started.duration(to: .now) < limit {
            for payload in payloads[(count % payloads.count)...].prefix(50) { try await body(payload) }
            count += 50
        }
        let elapsed = started.duration(to: .now)
        return Double(count) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }

    /// p50 and p99 of online checks over HTTP on loopback, with and without a claim.
    private func onlineChecks(database: String, payloads: [[UInt8]], directory: String) async throws {
        let serverProgram = URL(fileURLWithPath: FarecheckProgram.path).deletingLastPathComponent()
            .appendingPathComponent("farecheck-server").path
        let (added, _, token) = try BlocklistBenchmark.spawn(
            serverProgram, ["devices", "add", "bench-gate", "--role", "gate", "--db", database])
        guard added == 0, let deviceToken = token.split(separator: "\n").first.map(String.init) else {
            throw CommandFailure.exit("bench: farecheck-server devices add failed: \(token)")
        }
        let output = directory + "/serve.out"
        _ = FileManager.default.createFile(atPath: output, contents: nil)
        let server = Process()
        server.executableURL = URL(fileURLWithPath: serverProgram)
        server.arguments = [
            "serve", "--db", database, "--listen", "127.0.0.1:0", "--anchor-key", "Keys/demo-anchor.key",
            "--log-level", "error", "--claims-per-second", "100000", "--claim-burst", "100000",
        ]
        server.standardOutput = FileHandle(forWritingAtPath: output)
        server.standardError = FileHandle.nullDevice
        try server.run()
        defer {
            server.terminate()
            server.waitUntilExit()
        }
        var baseURL: String?
        for _ in 0..<600 where baseURL == nil {
            let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
            if let range = text.range(of: "listening on "), let end = text[range.upperBound...].firstIndex(of: " ") {
                baseURL = String(text[range.upperBound..<end])
            } else {
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        guard let baseURL else { throw CommandFailure.exit("bench: farecheck-server did not start") }
        let http = HTTPClient.shared
        var results: [String] = []
        for claiming in [false, true] {
            var latencies: [Double] = []
            for (index, payload) in payloads.enumerated() {
                var request = HTTPClientRequest(url: baseURL + "/v1/check")
                request.method = .POST
                request.headers.add(name: "Authorization", value: "Bearer \(deviceToken)")
                request.headers.add(name: "Content-Type", value: "application/json")
                request.body = .bytes(
                    try WireFormat.encode(
                        OnlineCheckRequest(
                            payload: payload, format: "fc1", issuer: "demo-transit",
                            ticketID: withUnsafeBytes(of: UInt64(index).bigEndian, Array.init),
                            claimFirstUse: claiming, inspectionID: claiming ? "bench-\(index)" : nil)))
                let started = ContinuousClock.now
                let response = try await http.execute(request, timeout: .seconds(10))
                let body = try await response.body.collect(upTo: 1 << 20)
                let elapsed = started.duration(to: .now)
                guard response.status == .ok else {
                    throw CommandFailure.exit(
                        "bench: the check answered \(response.status): \(String(buffer: body))")
                }
                latencies.append(
                    Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15)
            }
            latencies.sort()
            let p50 = latencies[latencies.count / 2]
            let p99 = latencies[min(latencies.count - 1, latencies.count * 99 / 100)]
            results.append(
                "\(claiming ? "claiming a first use" : "without a claim")"
                    + ": p50 \(String(format: "%.2f", p50)) ms, p99 \(String(format: "%.2f", p99)) ms")
        }
        printLine(
            "  online checks over HTTP on loopback (farecheck-server, SQLite, \(payloads.count) each, one at a time): "
                + results.joined(separator: "; "))
    }
}
