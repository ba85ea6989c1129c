import Daemon
import FareCore
import Foundation
import RSATestKeys
import ScannerSimulation
import TestSupport
import Testing
import TicketFormats
import TrustStore

@testable import Presentation

@Suite("farecheck daemon with UK RSP6 tickets", .serialized)
struct RSP6DaemonTests {
    @Test("a gate: an RSP6 ticket valid, its fare code single-use (replayed at once), a forged one refused")
    func gateWithRSP6() async throws {
        let setup = try DaemonBench()
        let issuer = RSP6TestIssuer(issuerID: "ZZ")
        let keyFile = setup.bench.path("ZZ.json")
        try Data(issuer.keyFileJSON).write(to: URL(fileURLWithPath: keyFile))
        let imported = try setup.bench.farecheck(["keys", "import", "--rsp6", keyFile])
        #expect(imported.status == 0, "\(imported.stderr)")

        let ticket = Self.validNow(issuer)
        var forged = ticket
        forged[30] = forged[30] == UInt8(ascii: "Z") ? UInt8(ascii: "Y") : forged[30] + 1

        let scanner = try SimulatedSSIScanner()
        defer { scanner.stop() }
        let config = try setup.config(
            scanner: scanner.devicePath,
            extra: """

                [verification]
                single_use_products = ["single", "SDS"]
                """)
        let daemon = try await DaemonProcess.start(config: config)
        let socket = try await daemon.connectSocket(path: setup.socket)
        #expect(await daemon.waitForSocketClients())
        #expect(await scanner.waitUntil(timeout: .seconds(10)) { $0.isEnabled })
        var events: [VerdictEvent] = []
        for payload in [ticket, ticket, forged] {
            scanner.scan(payload)
            events.append(try setup.event(await socket.readLine()))
        }
        #expect(events.map(\.verdict) == [.valid, .replayed, .invalidSignature])
        #expect(events.allSatisfy { $0.format == .ukRSP6 })
        #expect(events[0].issuer == "ZZ" && events[0].product == "SDS")
        #expect(events[0].details?.contains { $0.label == "origin" && $0.value == "NLC 5426" } == true)
        #expect(events[1].reason.contains("already passed front-door"))
        #expect(await daemon.stop() == 0)

        // Every verdict shown is in the journal, the RSP6 format and the ticket's reference recorded.
        let journal = try TrustStore(path: setup.bench.db).inspectionJournal.allInspections()
        #expect(journal.map(\.id) == events.map(\.id))
        #expect(journal.allSatisfy { $0.format?.known == .ukRSP6 })
        #expect(journal.prefix(2).allSatisfy { $0.ticketID == TicketID(Array("ZZGATE00001".utf8)) })
    }

    /// An RSP6 ticket of `issuer`, reference GATE00001, fare SDS: travel from yesterday (UK) for three days, valid now
    /// whatever the hour.
    static func validNow(_ issuer: RSP6TestIssuer) -> [UInt8] {
        let yesterday = UKTime.localFields(of: Date().addingTimeInterval(-86_400)).day
        var days = 0
        while SSBCalendar.adding(days, to: UKTime.epoch) != yesterday { days += 1 }
        var writer = RSP6TicketWriter(bitCount: RSP6Ticket.fixedPartBits + RSP6Ticket.purchaseBits)
        writer.text("GATE00001", at: 8, count: 9)
        writer.text("SDS", at: 91, count: 3)
        writer.text("5426", at: 109, count: 4)
        writer.text("1072", at: 133, count: 4)
        writer.dateTime(days: days, minutes: 0, at: 211)
        writer.number(1, at: 384, width: 1)
        writer.dateTime(days: days - 1, minutes: 600, at: RSP6Ticket.fixedPartBits)
        writer.number(3, at: RSP6Ticket.fixedPartBits + 107, width: 9)
        return issuer.text(writer.bytes, reference: "GATE00001")
    }
}
