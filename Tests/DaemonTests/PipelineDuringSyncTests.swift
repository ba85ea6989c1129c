import Daemon
import FareCore
import Foundation
import Issuing
import Logging
import Scanners
import Synchronization
import TestSupport
import Testing
import TicketFormats
import Verification

@testable import Presentation
@testable import TrustStore

/// The journal does not wait for sync: a scan while a revocation page holds the store's writer.
@Suite("inspection while sync writes")
struct PipelineDuringSyncTests {
    @Test(
        "a scan while a 50,000-entry revocation page holds the store's writer: verified, journaled and delivered before the page commits"
    )
    func scanDuringARevocationPage() async throws {
        let bench = try EndpointBench(loginRequired: false)
        let store = bench.store
        let demo = DemoKeys.issuingKeys[0]
        let key = try IssuingKey.parse(demo.text, source: demo.file)
        try store.saveKey(
            KeyRecord(
                family: .fc1, issuer: IssuerID(key.issuer ?? "demo-transit"), keyID: KeyID(key.keyID.hexString),
                algorithm: key.algorithm.name, spki: key.privateKey.publicKey.spkiDER, source: "test"))
        let now = Date()
        let payload = try key.payload(
            for: FC1.Claims(
                issuer: key.issuer ?? "demo-transit", ticketID: [0x5c, 0xa1], issuedAt: now - 60,
                validFrom: now - 60, validUntil: now + 3600, product: "day"),
            barcode: .aztec)
        let trust = StoreTrust(store: store)
        let pipeline = InspectionPipeline(
            verifier: TicketVerifier(keys: trust, revocations: trust), journal: store.inspectionJournal,
            replay: ReplayCheck(mode: .gate), sessions: nil, sinks: [EventHubSink(hub: bench.hub)],
            metrics: bench.metrics, status: bench.status, logger: Logger(label: "test"))

        // A page of 50,000 revocations, applied as sync applies one: in one transaction holding the writer,
        // which stays open until the scan below has its verdict.
        let pageOpen = DispatchSemaphore(value: 0)
        let commit = DispatchSemaphore(value: 0)
        let committed = Mutex(false)
        let writer = Thread {
            try? store.write { db in
                let insert = try db.cachedStatement(
                    sql: "INSERT INTO revoked_ticket (issuer, ticket_id, reason, revoked_at) VALUES (?, ?, ?, ?)")
                for index in 0..<50_000 {
                    try insert.execute(arguments: [
                        "demo-transit", Data(withUnsafeBytes(of: index, Array.init)), nil, 0,
                    ])
                }
                pageOpen.signal()
                commit.wait()
            }
            committed.withLock { $0 = true }
        }
        writer.start()
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                pageOpen.wait()
                continuation.resume()
            }
        }
        let verdicts = bench.hub.subscribe(replayLast: false)
        let event = await pipeline.inspect(ScanEvent(payload: payload, symbology: .aztec, device: "front-door"))
        var delivered: PublishedVerdict?
        for await published in verdicts {
            delivered = published
            break
        }
        // All of this happened while the page's transaction was still open.
        #expect(committed.withLock { $0 } == false)
        #expect(event.verdict == .valid, "\(event.reason)")
        #expect(!event.warnings.contains(InspectionPipeline.notJournaledCode))
        #expect(delivered?.event.id == event.id)
        #expect(try store.inspectionJournal.allInspections().map(\.id) == [event.id])
        commit.signal()
        while !committed.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(5)) }
        #expect(try store.ticketRevocations().count == 50_000)
    }

    @Test("a scan counts as in flight, for sync to give way to, from its arrival until its verdict reached the scanner")
    func scanCountsInFlight() async throws {
        let bench = try EndpointBench(loginRequired: false)
        let trust = StoreTrust(store: bench.store)
        let pipeline = InspectionPipeline(
            verifier: TicketVerifier(keys: trust, revocations: trust), journal: bench.store.inspectionJournal,
            replay: ReplayCheck(mode: .gate), sessions: nil, sinks: [EventHubSink(hub: bench.hub)],
            metrics: bench.metrics, status: bench.status, logger: Logger(label: "test"))
        let seen = Mutex<[Int]>([])
        let event = await pipeline.inspect(
            ScanEvent(payload: Array("not a ticket".utf8), symbology: .qr, device: "front-door")
        ) { _ in
            seen.withLock { $0.append(ScansInFlight.shared.count) }
        }
        #expect(event.verdict != .valid)
        // The scanner's beep came while the scan was in flight; once answered, nothing is.
        #expect(seen.withLock { $0 } == [1])
        #expect(ScansInFlight.shared.count == 0)
    }
}
