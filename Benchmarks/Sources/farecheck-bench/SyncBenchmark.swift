import FareCore
import Foundation
import Issuing
import SeededRandom
import Signatures
import Sync
import Synchronization
import TicketFormats
import TrustStore
import ValidationAPI
import Verification

/// `farecheck bench sync`: what sync costs a validator, measured on this machine.
///
/// Two figures, as issue 6 asks. Applying a large revocation delta: the signed pages are built exactly as
/// the server sends them, then a child process (so that its peak memory is its own) decodes, checks and
/// applies each page in one transaction while another thread verifies FC1 tickets against the same store.
/// And a store holding millions of revoked tickets: how long it takes to fill, how fast a lookup is, how big
/// the file is, and what a daemon on it holds in memory.
struct SyncBenchmark {
    /// Entries in the delta to apply.
    var revocations: Int
    /// Revoked tickets in the store for the lookup figures.
    var storeEntries: Int
    /// Entries per page, as a validator asks the server.
    var pageLimit: Int
    /// The anchor's private key that signs the pages (the demo anchor's by default).
    var anchorKeyPath: String
    /// Whether the apply paces its writes to disk (`BulkWritePacing.standard`, the default) or leaves them to SQLite.
    var paced = true

    func run() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "farecheck-bench-sync-\(getpid())"
        ).path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        if revocations > 0 { try benchApply(directory: directory) }
        if storeEntries > 0 { try benchLookups(directory: directory) }
    }

    // MARK: Applying a delta

    private func benchApply(directory: String) throws {
        let anchorKey = try Self.anchorKey(anchorKeyPath)

        let pagesDirectory = directory + "/pages"
        let built = ContinuousClock.now
        let (bytesOnTheWire, largestPage, pageCount) = try Self.writePages(
            revocations: revocations, pageLimit: pageLimit, signedBy: anchorKey, into: pagesDirectory)
        printLine(
            "sync: a revocation delta of \(revocations) tickets in \(pageCount) signed pages of \(pageLimit) "
                + "(\(bytesOnTheWire / (1 << 20)) MB on the wire, largest page \(largestPage / 1024) KB; "
                + "built in \(DaemonBenchmark.format(built.duration(to: .now))))")
        try applyAndReport(pagesDirectory: pagesDirectory, directory: directory)
    }

    /// The demo anchor's private key, which the bench's pages are signed with (validators pin its public key).
    static func anchorKey(_ path: String) throws -> PrivateKey {
        let anchorKey: PrivateKey
        do {
            anchorKey = try PrivateKey(pem: try String(contentsOfFile: path, encoding: .utf8))
        } catch {
            throw CommandFailure.exit("bench: cannot read the anchor key \(path): \(error)")
        }
        guard TrustAnchor.id(of: anchorKey.publicKey) == DemoAnchor.id else {
            throw CommandFailure.exit("bench: \(path) is not the demo anchor's key, which the bench pins")
        }
        return anchorKey
    }

    /// Writes `revocations` random revoked tickets as signed pages, as the server signs them: page 1 a full
    /// snapshot, the rest deltas from its next. Returns the bytes in all, the largest page and the page count.
    static func writePages(
        revocations: Int, pageLimit: Int, signedBy anchorKey: PrivateKey, into pagesDirectory: String
    )
        throws -> (bytes: Int, largest: Int, pages: Int)
    {
        try FileManager.default.createDirectory(atPath: pagesDirectory, withIntermediateDirectories: true)
        var generator = SystemRandomNumberGenerator()
        let revokedAt = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
        var bytesOnTheWire = 0
        var largestPage = 0
        let pageCount = (revocations + pageLimit - 1) / pageLimit
        for page in 0..<pageCount {
            let start = page * pageLimit
            let end = min(start + pageLimit, revocations)
            let tickets = (start..<end).map { _ in
                RevokedTicket(
                    issuer: "demo-transit",
                    ticketID: TicketID((0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }),
                    reason: "reported stolen", revokedAt: revokedAt)
            }
            let delta = RevocationDelta(
                from: Int64(start), next: Int64(end), full: page == 0, addedTickets: tickets,
                more: page < pageCount - 1)
            let document = try SignedDocument.sign(delta, with: anchorKey).jsonBytes()
            bytesOnTheWire += document.count
            largestPage = max(largestPage, document.count)
            try Data(document).write(
                to: URL(fileURLWithPath: pagesDirectory + String(format: "/page-%06d.json", page)))
        }
        return (bytesOnTheWire, largestPage, pageCount)
    }

    private func applyAndReport(pagesDirectory: String, directory: String) throws {
        // The validator's store: the demo keys, so that the verifying thread's tickets are valid.
        let storePath = directory + "/validator.sqlite"
        do {
            let store = try TrustStore(path: storePath)
            for demo in DemoKeys.issuingKeys {
                let key = try IssuingKey.parse(demo.text, source: demo.file)
                try store.saveKey(
                    KeyRecord(
                        family: .fc1, issuer: IssuerID(key.issuer ?? "demo-transit"), keyID: KeyID(key.keyID.hexString),
                        algorithm: key.algorithm.name, spki: key.privateKey.publicKey.spkiDER, source: "demo"))
            }
            try store.close()
        } catch let error as StoreError {
            throw CommandFailure.exit(error.description)
        }

        let reportPath = directory + "/apply-report.json"
        let (status, usage) = try Self.spawnSelf(
            [
                "bench", "sync", "--apply-pages", pagesDirectory, "--apply-store", storePath, "--apply-report",
                reportPath,
            ] + (paced ? [] : ["--unpaced"]))
        guard status == 0, let data = FileManager.default.contents(atPath: reportPath) else {
            throw CommandFailure.exit("bench: the applying child failed (status \(status))")
        }
        let report = try JSONDecoder().decode(ApplyReport.self, from: data)
        let seconds = report.openSeconds + report.applySeconds
        printLine(
            "  apply \(report.entries) entries in \(report.pages) pages, each decoded, signature-checked and "
                + "applied in one transaction (\(paced ? "written back paced" : "unpaced")): \(String(format: "%.2f s", seconds)) (goal: under 10 s); "
                + "peak RSS of the applying process \(usage.ru_maxrss / 1024) MB (goal: under 200 MB)")
        printLine(
            "  of which JSON decode + signature check \(String(format: "%.2f s", report.openSeconds)), "
                + "store transactions \(String(format: "%.2f s", report.applySeconds)); "
                + "\(String(format: "%.0f", Double(report.entries) / seconds)) entries/s")
        printLine(
            "  verify during the apply (FC1 ticket → verdict, key and revocation looked up in the store, "
                + "\(report.verifies) verifies on another thread): p50 \(report.verifyP50Micros) µs, "
                + "p99 \(report.verifyP99Micros) µs, max \(report.verifyMaxMicros) µs (goal: p99 under 5 ms)")
    }

    /// What the applying child measured, handed to the parent as JSON.
    struct ApplyReport: Codable {
        var pages: Int
        var entries: Int
        var openSeconds: Double
        var applySeconds: Double
        var verifies: Int
        var verifyP50Micros: Int
        var verifyP99Micros: Int
        var verifyMaxMicros: Int
    }

    /// The child's side: applies every page in `pagesDirectory` to the store while a thread verifies tickets
    /// (unless not `verifying`: the daemon figures' apply is a sync alone, with the daemon verifying).
    static func applyPages(
        pagesDirectory: String, storePath: String, reportPath: String, verifying: Bool = true, paced: Bool = true
    ) async throws {
        let store = try DaemonBenchmark.openStore(storePath, pacing: paced ? .standard : nil)
        let trust = StoreTrust(store: store)
        let verifier = TicketVerifier(keys: trust, revocations: trust)

        // Tickets with ids the delta does not hold: each verify looks up its key and its revocation.
        let key = try IssuingKey.parse(DemoKeys.issuingKeys[0].text, source: DemoKeys.issuingKeys[0].file)
        let now = Date()
        let payloads = try (0..<100).map { index in
            try key.payload(
                for: FC1.Claims(
                    issuer: key.issuer ?? "demo-transit",
                    ticketID: [0x5C, 0xA1] + withUnsafeBytes(of: UInt32(index).bigEndian, Array.init),
                    issuedAt: now, validFrom: now.addingTimeInterval(-60), validUntil: now.addingTimeInterval(86400),
                    product: "day", zones: ["A"], category: "adult", holder: "ID ****1234"),
                barcode: .qr)
        }
        guard (try? verifier.verify(payloads[0]))?.kind == .valid else {
            throw CommandFailure.exit("bench: the bench ticket does not verify against the store")
        }

        let files = try FileManager.default.contentsOfDirectory(atPath: pagesDirectory).sorted()
        let applying = Atomic<Bool>(true)
        let latencies = Mutex<[Duration]>([])
        let verifierDone = DispatchSemaphore(value: 0)
        let thread = Thread {
            var measured: [Duration] = []
            measured.reserveCapacity(200_000)
            var index = 0
            while verifying, applying.load(ordering: .relaxed) {
                let started = ContinuousClock.now
                let verdict = try? verifier.verify(payloads[index % payloads.count])
                measured.append(started.duration(to: .now))
                precondition(verdict?.kind == .valid, "a ticket stopped verifying during the apply")
                index += 1
            }
            latencies.withLock { $0 = measured }
            verifierDone.signal()
        }
        thread.start()

        var openSeconds = 0.0
        var applySeconds = 0.0
        var entries = 0
        // On the sync thread, as a sync round runs (`SyncRound.run`): below the verifying thread's priority.
        try await SyncThread.shared.run { () async throws in
            for file in files {
                let opened = ContinuousClock.now
                guard let bytes = FileManager.default.contents(atPath: pagesDirectory + "/" + file) else {
                    throw CommandFailure.exit("bench: cannot read \(file)")
                }
                let delta = try SignedDocument(jsonBytes: Array(bytes)).openRevocationDelta(trusting: [.demo])
                let applied = ContinuousClock.now
                openSeconds += DaemonBenchmark.seconds(opened.duration(to: applied))
                do throws(StoreError) {
                    try SyncRound.apply(delta, to: store)
                } catch {
                    throw CommandFailure.exit(error.description)
                }
                applySeconds += DaemonBenchmark.seconds(applied.duration(to: .now))
                entries += delta.entryCount
            }
        }
        applying.store(false, ordering: .relaxed)
        verifierDone.wait()
        let sorted = latencies.withLock { $0 }.sorted()
        func micros(_ fraction: Double) -> Int {
            guard !sorted.isEmpty else { return 0 }
            let duration = sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]
            return Int(DaemonBenchmark.seconds(duration) * 1e6)
        }
        let report = ApplyReport(
            pages: files.count, entries: entries, openSeconds: openSeconds, applySeconds: applySeconds,
            verifies: sorted.count, verifyP50Micros: micros(0.5), verifyP99Micros: micros(0.99),
            verifyMaxMicros: micros(1))
        try JSONEncoder().encode(report).write(to: URL(fileURLWithPath: reportPath))
    }

    // MARK: Lookups in a large store

    private func benchLookups(directory: String) throws {
        let storePath = directory + "/revoked.sqlite"
        let filled = ContinuousClock.now
        do {
            let store = try TrustStore(path: storePath)
            let batch = 500_000
            for start in stride(from: 0, to: storeEntries, by: batch) {
                // Ids in ascending order, as an import from a sorted export would come: appends to the index.
                let records = (start..<min(start + batch, storeEntries)).map { index in
                    TicketRevocationRecord(
                        issuer: "demo-transit", ticketID: TicketID(Self.ticketID(index, of: storeEntries)),
                        reason: "bench")
                }
                try store.revokeTickets(records)
            }
            try store.close()
        } catch {
            throw CommandFailure.exit(error.description)
        }
        let fillTime = filled.duration(to: .now)
        let fileSize = ["", "-wal", "-shm"].reduce(0) { total, suffix in
            total + ((try? FileManager.default.attributesOfItem(atPath: storePath + suffix)[.size] as? Int) ?? 0)
        }
        printLine(
            "sync: a store with \(storeEntries) revoked tickets: filled in \(DaemonBenchmark.format(fillTime)) "
                + "(\(String(format: "%.0f", Double(storeEntries) / DaemonBenchmark.seconds(fillTime))) rows/s, "
                + "one transaction per 500,000), file \(fileSize / (1 << 20)) MB")

        let store = try DaemonBenchmark.openStore(storePath)
        let trust = StoreTrust(store: store)
        var generator = SystemRandomNumberGenerator()
        let lookups = 100_000
        var hitTimes: [Duration] = []
        var missTimes: [Duration] = []
        hitTimes.reserveCapacity(lookups / 2)
        missTimes.reserveCapacity(lookups / 2)
        for round in 0..<lookups {
            let index = Int.random(in: 0..<storeEntries, using: &generator)
            var ticketID = Self.ticketID(index, of: storeEntries)
            let hit = round % 2 == 0
            if !hit { ticketID[15] ^= 0xFF }
            let started = ContinuousClock.now
            let found = try trust.revocation(ofTicket: TicketID(ticketID), issuer: "demo-transit")
            let elapsed = started.duration(to: .now)
            guard (found != nil) == hit else {
                throw CommandFailure.exit("bench: lookup \(round) found the wrong thing")
            }
            if hit { hitTimes.append(elapsed) } else { missTimes.append(elapsed) }
        }
        func percentile(_ times: [Duration], _ fraction: Double) -> String {
            let sorted = times.sorted()
            return DaemonBenchmark.format(sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))])
        }
        let all = hitTimes + missTimes
        printLine(
            "  revocation lookup (StoreTrust, indexed read), \(lookups) random lookups, half hits, half misses: "
                + "p50 \(percentile(all, 0.5)), p99 \(percentile(all, 0.99)) "
                + "(hits p99 \(percentile(hitTimes, 0.99)), misses p99 \(percentile(missTimes, 0.99)))")
        do { try store.close() } catch { throw CommandFailure.exit(error.description) }

        let daemon = try BenchDaemon(directory: directory, storePath: storePath)
        defer { daemon.kill() }
        Thread.sleep(forTimeInterval: 1)
        let idle = daemon.residentKilobytes()
        printLine(
            "  farecheck daemon on that store: ready in \(DaemonBenchmark.format(daemon.startup)), "
                + "resident memory idle \(idle.map { "\($0 / 1024) MB" } ?? "unknown") (goal: under 60 MB)")
        _ = daemon.terminate()
    }

    /// Ticket id `index` of `count`: 16 bytes, ascending with the index and spread over the whole id space,
    /// the rest pseudo-random but the same every time, so that a lookup can name a stored id again.
    static func ticketID(_ index: Int, of count: Int) -> [UInt8] {
        let step = UInt64.max / UInt64(max(count, 1))
        var mixer = SeededRandomNumberGenerator(seed: UInt64(index))
        let high = UInt64(index) &* step &+ mixer.next() % step
        let low = mixer.next()
        return withUnsafeBytes(of: high.bigEndian, Array.init) + withUnsafeBytes(of: low.bigEndian, Array.init)
    }

    /// Runs this program again with `arguments` and waits for it: its exit status and resource usage alone
    /// (`wait4`, not the sum over every child this process ever had).
    static func spawnSelf(_ arguments: [String]) throws -> (Int32, rusage) {
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let spawned = withSignalsUnblocked { posix_spawn(&pid, executable, nil, nil, argv, environ) }
        guard spawned == 0 else { throw CommandFailure.exit("bench: cannot start \(executable): errno \(spawned)") }
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 {
            guard errno == EINTR else { throw CommandFailure.exit("bench: wait4 failed: errno \(errno)") }
        }
        // WIFEXITED and WEXITSTATUS are macros Swift cannot call.
        let exited = status & 0x7F == 0
        return (exited ? (status >> 8) & 0xFF : 128 + (status & 0x7F), usage)
    }
}
