import FareCore
import Foundation
import GRDB
import SeededRandom
import TicketFormats
import TrustStore
import Verification

/// `farecheck-bench blocklist`: what the Deutschland-Ticket blocklists cost a validator, measured on this machine.
///
/// Writes a VDV-KA blocklist (a real SQLite file, rows in random order, some numbers twice with two instances) and
/// a DTVG UIC blocklist (a real zip holding `blacklistuic.csv`, deflated) of `entries` entries each; imports each
/// with the real `farecheck revoke` (a child process: its time from start to exit, and its own peak resident
/// memory by `wait4`); then times the live lookups the daemon makes (`StoreTrust`, half hits, half misses) on the
/// store holding both lists; and the server's import of the same files (`farecheck-server revoke`, SQLite).
struct BlocklistBenchmark {
    /// Entries in each list.
    var entries: Int
    /// Lookups per list.
    var lookups: Int = 100_000

    func run() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "farecheck-bench-blocklist-\(getpid())"
        ).path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }

        let written = ContinuousClock.now
        let vdvFile = directory + "/blacklist.db"
        let dtvgFile = directory + "/blacklistuic.zip"
        let vdvRows = try Self.writeVDV(entries: entries, to: vdvFile)
        let dtvgBytes = try Self.writeDTVG(entries: entries, to: dtvgFile)
        printLine(
            "blocklist: \(entries) entries each; VDV-KA blocklist \(vdvRows) rows (\(size(vdvFile) >> 20) MB SQLite), "
                + "DTVG zip \(size(dtvgFile) >> 20) MB (CSV \(dtvgBytes >> 20) MB); "
                + "written in \(DaemonBenchmark.format(written.duration(to: .now)))")

        let store = directory + "/validator.sqlite"
        for (option, file, version) in [
            ("--vdv-blocklist", vdvFile, "2025-06-01T03:00:00Z"), ("--dtvg-blocklist", dtvgFile, "42"),
        ] {
            let started = ContinuousClock.now
            let (status, usage, output) = try Self.spawn(
                FarecheckProgram.path, ["revoke", option, file, "--list-version", version, "--db", store])
            let elapsed = started.duration(to: .now)
            guard status == 0 else { throw CommandFailure.exit("bench: farecheck revoke \(option) failed: \(output)") }
            printLine(
                "  farecheck revoke \(option): \(DaemonBenchmark.format(elapsed)) from start to exit (goal: under 10 s), "
                    + "peak RSS \(usage.ru_maxrss / 1024) MB; "
                    + (output.split(separator: "\n").last { $0.hasPrefix("imported") }.map(String.init) ?? output))
        }
        printLine("  store file with both lists: \(size(store) >> 20) MB")
        try benchLookups(storePath: store)

        let server = directory + "/server.sqlite"
        let serverProgram = URL(fileURLWithPath: FarecheckProgram.path).deletingLastPathComponent()
            .appendingPathComponent("farecheck-server").path
        let (initialised, _, initOutput) = try Self.spawn(serverProgram, ["init", "--db", server])
        guard initialised == 0 else { throw CommandFailure.exit("bench: farecheck-server init failed: \(initOutput)") }
        for (option, file, version) in [
            ("--vdv-blocklist", vdvFile, "2025-06-01T03:00:00Z"), ("--dtvg-blocklist", dtvgFile, "42"),
        ] {
            let started = ContinuousClock.now
            let (status, usage, output) = try Self.spawn(
                serverProgram, ["revoke", option, file, "--list-version", version, "--db", server])
            let elapsed = started.duration(to: .now)
            guard status == 0 else { throw CommandFailure.exit("bench: farecheck-server revoke failed: \(output)") }
            printLine(
                "  farecheck-server revoke \(option) (SQLite, every entry a logged change): "
                    + "\(DaemonBenchmark.format(elapsed)), peak RSS \(usage.ru_maxrss / 1024) MB")
        }
    }

    private func size(_ path: String) -> Int {
        ["", "-wal"].reduce(0) { total, suffix in
            total + ((try? FileManager.default.attributesOfItem(atPath: path + suffix)[.size] as? Int) ?? 0)
        }
    }

    /// The key of entry `index`: VDV organisation and entitlement number, DTVG RICS and ticket id. The same
    /// every time, so that a lookup can name a listed entry again.
    static func vdvKey(_ index: Int) -> (organisation: UInt16, number: UInt32) {
        (UInt16(1 + index % 5000), UInt32(truncatingIfNeeded: index &* 2_654_435_761 % 4_000_000_000))
    }

    static func dtvgKey(_ index: Int) -> (rics: UInt32, ticketID: String) {
        let alphabet = Array("ABCDEFGHJKLMNPQRSTUVWXYZ23456789".utf8)
        var mixer = SeededRandomNumberGenerator(seed: UInt64(index))
        let id = (0..<8).map { _ in alphabet[Int(mixer.next() % UInt64(alphabet.count))] }
        // The index in the id keeps the keys distinct whatever the random letters.
        return ([80, 1080, 1180, 1181][index % 4], String(decoding: id, as: UTF8.self) + String(index, radix: 36))
    }

    /// A VDV-KA blocklist of `entries` entitlements, in random order, every tenth with a second, lower instance.
    static func writeVDV(entries: Int, to path: String) throws -> Int {
        let queue = try DatabaseQueue(path: path)
        var order = Array(0..<entries)
        var generator = SeededRandomNumberGenerator(seed: 22)
        order.shuffle(using: &generator)
        var rows = 0
        try queue.write { db in
            try db.execute(
                sql:
                    "CREATE TABLE blacklist (type TEXT, orgId INTEGER, number INTEGER, instanceNum INTEGER, lockMode INTEGER)"
            )
            let insert = try db.makeStatement(sql: "INSERT INTO blacklist VALUES (?, ?, ?, ?, ?)")
            for index in order {
                let key = vdvKey(index)
                try insert.execute(arguments: ["B", Int64(key.organisation), Int64(key.number), 2, index % 3])
                rows += 1
                if index % 10 == 0 {
                    try insert.execute(arguments: ["B", Int64(key.organisation), Int64(key.number), 1, 0])
                    rows += 1
                }
            }
        }
        try queue.close()
        return rows
    }

    /// A DTVG UIC blocklist of `entries` tickets: `blacklistuic.csv` (BOM, CRLF) deflated in a zip. Returns the
    /// CSV's size.
    static func writeDTVG(entries: Int, to path: String) throws -> Int {
        var csv: [UInt8] = [0xEF, 0xBB, 0xBF] + Array("rics,ticketId\r\n".utf8)
        csv.reserveCapacity(entries * 20)
        for index in 0..<entries {
            let key = dtvgKey(index)
            csv += Array("\(key.rics),\(key.ticketID)\r\n".utf8)
        }
        try Data(ZipWriter.archive(name: DTVGBlocklistFile.csvName, contents: csv)).write(
            to: URL(fileURLWithPath: path))
        return csv.count
    }

    private func benchLookups(storePath: String) throws {
        let store = try DaemonBenchmark.openStore(storePath)
        let trust = StoreTrust(store: store)
        var generator = SystemRandomNumberGenerator()
        for list in BlocklistKind.allCases {
            var times: [Duration] = []
            times.reserveCapacity(lookups)
            for round in 0..<lookups {
                let index = Int.random(in: 0..<entries, using: &generator)
                let hit = round % 2 == 0
                let key: BlocklistKey
                switch list {
                case .vdvKA:
                    let (organisation, number) = Self.vdvKey(index)
                    key = .vdvEntitlement(organisation: hit ? organisation : organisation &+ 7_000, number: number)
                case .dtvgUIC:
                    let (rics, ticketID) = Self.dtvgKey(index)
                    key = .dtvgTicket(rics: rics, ticketID: Array((hit ? ticketID : ticketID + "-").utf8))
                }
                let started = ContinuousClock.now
                let found = try trust.blocklistRevocation(for: key)
                times.append(started.duration(to: .now))
                guard (found != nil) == hit else {
                    throw CommandFailure.exit("bench: \(list) lookup \(round) found the wrong thing")
                }
            }
            times.sort()
            func percentile(_ fraction: Double) -> String {
                DaemonBenchmark.format(times[min(times.count - 1, Int(Double(times.count) * fraction))])
            }
            printLine(
                "  \(list) lookup (StoreTrust, as the daemon looks up), \(lookups) random, half hits: "
                    + "p50 \(percentile(0.5)), p99 \(percentile(0.99)) (goal: p99 under 100 µs), max \(percentile(1))")
        }
        try store.close()
    }

    /// Runs `executable` with `arguments` and waits for it: its exit status, its own resource usage (`wait4`) and
    /// what it wrote on standard output and error.
    static func spawn(_ executable: String, _ arguments: [String]) throws -> (Int32, rusage, String) {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("bench-output-\(getpid())").path
        _ = FileManager.default.createFile(atPath: output, contents: nil)
        defer { try? FileManager.default.removeItem(atPath: output) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_APPEND, 0)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let spawned = withSignalsUnblocked { posix_spawn(&pid, executable, &actions, nil, argv, environ) }
        guard spawned == 0 else { throw CommandFailure.exit("bench: cannot start \(executable): errno \(spawned)") }
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 {
            guard errno == EINTR else { throw CommandFailure.exit("bench: wait4 failed: errno \(errno)") }
        }
        let exited = status & 0x7F == 0
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        return (exited ? (status >> 8) & 0xFF : 128 + (status & 0x7F), usage, text)
    }
}

/// A zip archive of one deflated file, for the bench's DTVG list (a test writer, never shipped): local header,
/// raw deflate data (zlib's stream without its 2-byte header and Adler-32 trailer), central directory, end record.
enum ZipWriter {
    static func archive(name: String, contents: [UInt8]) -> [UInt8] {
        let zlib = Zlib.deflate(contents, level: 6)
        let deflated = Array(zlib[2..<(zlib.count - 4)])
        let crc = contents.withUnsafeBufferPointer { Zlib.crc32($0) }
        let nameBytes = Array(name.utf8)
        func le16(_ value: Int) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF)] }
        func le32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(value >> (8 * $0) & 0xFF) } }
        let common =
            le16(20) + le16(0) + le16(8) + le16(0) + le16(0x21) + le32(crc) + le32(UInt32(deflated.count))
            + le32(UInt32(contents.count)) + le16(nameBytes.count) + le16(0)
        let local = le32(0x0403_4B50) + common + nameBytes
        let central =
            le32(0x0201_4B50) + le16(20) + common + le16(0) + le16(0) + le16(0) + le32(0) + le32(0) + nameBytes
        let directoryOffset = local.count + deflated.count
        let end =
            le32(0x0605_4B50) + le16(0) + le16(0) + le16(1) + le16(1) + le32(UInt32(central.count))
            + le32(UInt32(directoryOffset)) + le16(0)
        return local + deflated + central + end
    }
}
