import Daemon
import FareCore
import Foundation
import Glibc
import ScannerSimulation
import Signatures
import TestSupport
import Testing
import TicketFormats
import TrustStore

/// The blocklist test files (`scripts/make-blocklist-fixtures.py`: Python's sqlite3 and zipfile).
private let blocklistFixtures = Fixtures.path("blocklists")

/// A ticket on a published blocklist, scanned through the daemon: the event line, the journal and the page say
/// which list, which entry and what to do.
@Suite("Blocklists in the daemon", .serialized)
struct BlocklistDaemonTests {
    /// A UIC 918.3 ticket valid today whose U_HEAD names issuer 0080 and ticket key RPEX4F-4 (DB's City-Mobil
    /// sample's key, which the DTVG test list names as RICS 80), signed with a key of the test's own that the
    /// store trusts as 0080/00099.
    static func uicTicket(store bench: Workbench) throws -> [UInt8] {
        let privateKey = try PrivateKey.generate(.ecP256)
        let keyFile = bench.path("0080-00099.pub.pem")
        try privateKey.publicKey.pem.write(toFile: keyFile, atomically: true, encoding: .utf8)
        let imported = try bench.farecheck(["keys", "import", keyFile, "--issuer", "0080", "--kid", "00099"])
        guard imported.status == 0 else { throw DaemonProcess.Failure(message: imported.stderr) }
        let now = Date()
        let calendar = Calendar(identifier: .gregorian)
        func day(_ date: Date) -> UICDay {
            var utc = calendar
            utc.timeZone = TimeZone(identifier: "Europe/Berlin")!
            let parts = utc.dateComponents([.year, .month, .day], from: date)
            return UICDay(year: parts.year!, month: parts.month!, day: parts.day!)!
        }
        let from = day(now - 86_400)
        let until = day(now + 86_400)
        let head = UICHead(issuerCode: "0080", ticketKey: "RPEX4F-4", issuedAt: now - 86_400)
        let bl = UIC0080BL(
            validityBlocks: [.init(firstDay: from, lastDay: until, serial: "0000000001")],
            fields: [
                .init(tag: 1, value: "City-Mobil"), .init(tag: 31, value: from.description),
                .init(tag: 32, value: until.description),
            ])
        return try UIC918_3.encode(
            records: [head.record(), bl.record()], version: 2, issuerCode: "0080", keyID: "00099"
        ) { compressed in try privateKey.signature(for: compressed, scheme: .ecdsa(.sha256, .raw)) }
    }

    @Test("the event line, the socket and the journal carry the list, the entry and the action; a gate refuses")
    func eventLineAndJournal() async throws {
        let setup = try DaemonBench()
        let payload = try Self.uicTicket(store: setup.bench)
        // The gate: a hook told every verdict, which records whether it would open.
        let script = setup.bench.path("gate.sh")
        let record = setup.bench.path("gate.log")
        try "#!/bin/sh\necho \"$FARECHECK_VERDICT $FARECHECK_VALID\" >> \(record)\n".write(
            toFile: script, atomically: true, encoding: .utf8)
        chmod(script, 0o755)
        let scanner = try SimulatedSSIScanner()
        defer { scanner.stop() }
        let config = try setup.config(
            scanner: scanner.devicePath, extra: "\n[gate]\ncommand = [\"\(script)\"]\nverdicts = [\"*\"]\n")
        let daemon = try await DaemonProcess.start(config: config)
        let socket = try await daemon.connectSocket(path: setup.socket)
        #expect(await daemon.waitForSocketClients())
        #expect(await scanner.waitUntil(timeout: .seconds(10)) { $0.isEnabled })

        scanner.scan(payload)
        let before = try setup.event(await socket.readLine())
        #expect(before.verdict == .valid, "\(before.reason)")

        // Imported while the daemon runs: the next scan sees it (the store is looked up live).
        let imported = try setup.bench.farecheck([
            "revoke", "--dtvg-blocklist", "\(blocklistFixtures)/dtvg-blocklist.zip", "--version-file",
            "\(blocklistFixtures)/dtvg-version.txt",
        ])
        #expect(imported.status == 0, "\(imported.stderr)")
        scanner.scan(payload)
        let event = try setup.event(await socket.readLine())
        #expect(event.verdict == .revoked)
        #expect(
            event.reason == "On the DTVG UIC blocklist (version 42): ticket RPEX4F-4 of RICS 80. Refuse the ticket.")
        let revocation = try #require(event.revocation)
        #expect(revocation.list == .dtvgUIC && revocation.version == "42")
        #expect(revocation.entry == .dtvg(DTVGBlocklistEntry(rics: 80, ticketID: "RPEX4F-4")))
        #expect(revocation.action == .refuse)
        // The JSON line names them as the API documents them.
        // Standard output is read on another thread: its line can come a moment after the socket's.
        var printed: String?
        let printedBy = Date().addingTimeInterval(10)
        while printed == nil, Date() < printedBy {
            printed = daemon.stdout.lines.last { $0.contains("\"revoked\"") }
            if printed == nil { try await Task.sleep(for: .milliseconds(10)) }
        }
        let line = try #require(printed)
        #expect(
            line.contains(
                #""revocation":{"action":"refuse","entry":{"list":"dtvg-uic","rics":80,"ticketId":"RPEX4F-4"},"#))
        #expect(line.contains(#""lockMode":"block","version":"42"}"#))
        // The gate opened for the ticket before the import, and not for it on the list.
        let deadline = Date().addingTimeInterval(10)
        var gate: [String] = []
        while Date() < deadline {
            gate = ((try? String(contentsOfFile: record, encoding: .utf8)) ?? "").split(separator: "\n").map(
                String.init)
            if gate.count >= 2 { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(gate == ["valid 1", "revoked 0"])
        #expect(await daemon.stop(signal: SIGTERM, timeout: 5) == 0, "\(daemon.stderr.text)")

        let journal = try TrustStore(path: setup.bench.db).inspectionJournal.allInspections()
        #expect(journal.map(\.verdict) == ["valid", "revoked"])
        #expect(journal.last?.reason == event.reason)
    }
}

extension InspectorPageBrowserTests {
    /// A VDV-KA entry saying "confiscate": the instruction stands out under the verdict, the list in the facts.
    @Test func aBlocklistedTicketShowsWhatToDo() async throws {
        let bench = try EndpointBench(loginRequired: false)
        try await bench.run { port in
            let browser = try HeadlessChromium(width: 480, height: 800)
            try await browser.open("http://127.0.0.1:\(port)/", width: 480, height: 800)
            try await browser.waitUntil("document.getElementById('link').dataset.state === 'live'")
            for (mode, text) in [
                (BlocklistLockMode.confiscate, "Keep the ticket: it is to be confiscated."),
                (.suspicious, "Check the passenger's ID: the ticket is suspicious."),
            ] {
                let revocation = BlocklistRevocation(
                    version: "2025-06-01T03:00:00Z",
                    entry: .vdv(
                        VDVBlocklistEntry(
                            item: .entitlement, organisation: 57, number: 2_099_643, instance: 3, lockMode: mode)))
                bench.hub.publish(EndpointBench.event(.revoked, reason: revocation.reason, revocation: revocation))
                try await browser.waitUntil(
                    "document.getElementById('action').dataset.action === '\(mode.action.rawValue)'")
                let action = try await browser.evaluate("document.getElementById('action').textContent") as? String
                #expect(action == text)
                #expect(try await browser.evaluate("document.getElementById('action').hidden") as? Bool == false)
                let dom = try await browser.dom()
                #expect(dom.contains("VDV-KA blocklist, version 2025-06-01T03:00:00Z, lock mode \(mode.name)"))
                HeadlessChromium.keep(try await browser.screenshot(), as: "inspector-blocklist-\(mode.name).png")
            }
            // A verdict without a blocklist entry hides the instruction again.
            bench.hub.publish(EndpointBench.event(.valid, reason: "The ticket is genuine and valid now."))
            try await browser.waitUntil("document.getElementById('verdict').dataset.state === 'valid'")
            #expect(try await browser.evaluate("document.getElementById('action').hidden") as? Bool == true)
            try await browser.quit()
        }
    }
}
