import Daemon
import FareCore
import Foundation
import Glibc
import Scanners
import TestSupport
import Testing
import TrustStore

/// A full disk on a real (tmpfs) filesystem: verdicts shown while it is full are journaled once space returns.
@Suite(
    "full disk", .serialized,
    .enabled(if: SmallFilesystem.canMount, "mounting a small tmpfs needs root (CAP_SYS_ADMIN); skipped here"))
struct FullDiskTests {
    static func record(_ index: Int) -> InspectionRecord {
        let verdict = Verdict(
            kind: .valid, reason: "The ticket is genuine and valid now.", signature: .valid, format: .fc1,
            issuer: "demo-transit", keyID: "0a0b",
            ticket: Ticket(format: .fc1, issuer: "demo-transit", ticketID: [UInt8(index % 256), 1]),
            inspectedAt: Date(timeIntervalSince1970: 1_800_000_000 + Double(index)))
        return InspectionRecord(
            Inspection(
                source: "front-door", symbology: .aztec, payloadByteCount: 300,
                payloadDigest: [UInt8](repeating: UInt8(index % 256), count: 32), verdict: verdict))
    }

    @Test("the journal on a full disk: records go to the reserve, survive a reopen, and are written once after")
    func journalReserveAcrossReopen() throws {
        let disk = try SmallFilesystem(kibibytes: 3 * 1024)
        let paths = InspectionJournal.paths(besideStore: disk.path + "/farecheck.sqlite")
        var shown: [String] = []
        do {
            let journal = try InspectionJournal(
                path: paths.journal, reservePath: paths.reserve, reserveBytes: 256 << 10)
            #expect(journal.reserveAvailable)
            let before = Self.record(0)
            #expect(journal.append(before) == .journaled)
            shown.append(before.id)
            disk.fill()
            #expect(disk.freeBytes < 4096)
            var kept: [InspectionJournal.Durability] = []
            for index in 1...150 {
                let record = Self.record(index)
                kept.append(journal.append(record))
                shown.append(record.id)
            }
            // The disk refused the database; the reserve took every record (none only in memory).
            #expect(kept.allSatisfy { $0 != .heldInMemory })
            #expect(kept.contains(.reserved))
            #expect(journal.pendingCount == kept.filter { $0 == .reserved }.count)
            #expect(journal.lastFailure != nil)
        }
        // A restart while the disk is still full: the waiting records are found in the reserve.
        let reopened = try InspectionJournal(path: paths.journal, reservePath: paths.reserve, reserveBytes: 256 << 10)
        #expect(reopened.pendingCount > 0)
        disk.free()
        // The first write after space returns brings everything in, in order, once.
        let after = Self.record(151)
        #expect(reopened.append(after) == .journaled)
        shown.append(after.id)
        #expect(reopened.pendingCount == 0)
        #expect(reopened.lastFailure == nil)
        let journaled = try reopened.allInspections().map(\.id)
        #expect(journaled.count == shown.count)
        #expect(Set(journaled) == Set(shown))
        #expect(try reopened.allInspections().map(\.id) == shown)
    }

    @Test("reserve full too: the record is held in memory and written when space returns")
    func reserveFull() throws {
        let disk = try SmallFilesystem(kibibytes: 2 * 1024)
        let paths = InspectionJournal.paths(besideStore: disk.path + "/farecheck.sqlite")
        let journal = try InspectionJournal(path: paths.journal, reservePath: paths.reserve, reserveBytes: 2048)
        #expect(journal.append(Self.record(0)) == .journaled)
        disk.fill()
        var outcomes: [InspectionJournal.Durability] = []
        for index in 1...10 { outcomes.append(journal.append(Self.record(index))) }
        #expect(outcomes.contains(.reserved))
        #expect(outcomes.last == .heldInMemory)
        #expect(journal.pendingCount == 10)
        disk.free()
        try journal.drain()
        #expect(journal.pendingCount == 0)
        #expect(try journal.allInspections().count == 11)
    }
}
