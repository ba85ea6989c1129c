import FareCore
import Foundation
import Signatures
import TestSupport
import Testing
import ValidationAPI
import ValidationServer

/// What the server does with clients that connect and then dawdle, with floods of bad tokens, and with the
/// permissions of its database file: each against the real server on loopback, with short limits so that every
/// test ends within seconds.
@Suite("The server against slow clients, token floods and other users", .timeLimit(.minutes(5)))
struct ServerHardeningTests {
    static let health = "GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"

    @Test("a client that sends half a request head, then trickles it, is disconnected at the header timeout")
    func halfHead() async throws {
        let bench = try ServerBench(.sqlite)
        let server = try bench.startServer(extra: ["--header-timeout", "1", "--idle-timeout", "60"])
        let connection = try RawTCPConnection(port: server.port)
        try connection.send("GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        // A byte every 200 ms keeps the connection busy, but never completes the head.
        let trickle = Task {
            for byte in "X-Slow: 1".utf8 {
                try? await Task.sleep(for: .milliseconds(200))
                try? connection.send([byte])
            }
        }
        // Well before the idle timeout (60 s): only the header timeout can close it.
        let (bytes, closed) = await connection.readUntilClosed(within: 15)
        trickle.cancel()
        #expect(closed, "the connection is still open after 15 s")
        #expect(bytes.isEmpty, "no answer to a request that never arrived: \(String(decoding: bytes, as: UTF8.self))")

        // A client that says nothing at all is closed too.
        let silent = try RawTCPConnection(port: server.port)
        #expect(await silent.readUntilClosed(within: 15).closed)
    }

    @Test("a keep-alive connection is closed when idle; the next head's deadline counts from its first byte")
    func keepAlive() async throws {
        let bench = try ServerBench(.sqlite)
        let idle = try bench.startServer(extra: ["--header-timeout", "60", "--idle-timeout", "1"])
        let connection = try RawTCPConnection(port: idle.port)
        try connection.send(Self.health)
        #expect(await connection.readResponse(within: 10)?.status == 200)
        #expect(await connection.readUntilClosed(within: 15).closed, "the idle keep-alive connection stays open")
        idle.stop()

        let heads = try bench.startServer(extra: ["--header-timeout", "1", "--idle-timeout", "60"])
        let reused = try RawTCPConnection(port: heads.port)
        try reused.send(Self.health)
        #expect(await reused.readResponse(within: 10)?.status == 200)
        // Idle for longer than the header timeout: still open (idle is not a head being read) …
        #expect(await reused.next(within: 2) == .quiet)
        try reused.send(Self.health)
        #expect(await reused.readResponse(within: 10)?.status == 200, "a second request on the same connection")
        // … but half a head is closed within the header timeout.
        try reused.send("GET /v1/health HTTP/1.1\r\n")
        #expect(await reused.readUntilClosed(within: 15).closed)
    }

    @Test(
        "beyond --max-connections a connection waits in the listen queue, and is served once a served one closes")
    func connectionCap() async throws {
        let bench = try ServerBench(.sqlite)
        let server = try bench.startServer(
            extra: ["--max-connections", "2", "--header-timeout", "60", "--idle-timeout", "60"])
        // Two connections, each answered once and kept open.
        var held: [RawTCPConnection] = []
        for _ in 0..<2 {
            let connection = try RawTCPConnection(port: server.port)
            try connection.send(Self.health)
            #expect(await connection.readResponse(within: 10)?.status == 200)
            held.append(connection)
        }
        // The third is accepted by the kernel, but not served while two are open.
        let third = try RawTCPConnection(port: server.port)
        try third.send(Self.health)
        #expect(await third.next(within: 2) == .quiet, "served beyond the cap")
        held.removeFirst()
        #expect(await third.readResponse(within: 10)?.status == 200, "not served after a slot freed")
    }

    @Test("a flood of bad tokens writes a bounded number of log lines, counts every refusal, never logs a token")
    func refusalAudit() async throws {
        let bench = try ServerBench(.sqlite)
        let revokedToken = "revoked-device-token-0123456789"
        // A device registered before ids had to be printable, then revoked: its id is logged, escaped.
        try await bench.withStore { store in
            try await store.addDevice(
                id: "old\u{1B}[31mdevice\nforged", tokenHash: digest(.sha256, Array(revokedToken.utf8)), role: .gate,
                at: Date())
            _ = try await store.revokeDevice(id: "old\u{1B}[31mdevice\nforged", at: Date())
        }
        let server = try bench.startServer(extra: ["--auth-log-limit", "5"])
        let unknownToken = "unknown-token-9f8e7d6c5b4a"
        let flood = 150
        for index in 0..<flood {
            let token: String? =
                switch index % 3 {
                case 0: unknownToken
                case 1: revokedToken
                default: nil
                }
            let answer = try await send(.GET, server.baseURL + "/v1/keys", token: token)
            #expect(answer.status == 401)
        }
        #expect(server.stop() == 0)
        let lines = server.log.split(separator: "\n").map(String.init)
        let single = lines.filter { $0.contains("refused request (401)") }
        let summaries = lines.filter { $0.contains("refused requests (401)") }
        let suppressed = summaries.compactMap { line -> Int? in
            guard let range = line.range(of: "suppressed=") else { return nil }
            return Int(line[range.upperBound...].prefix { $0.isNumber })
        }.reduce(0, +)
        // At most 5 lines a minute plus one summary: two windows at most for a flood of a few seconds.
        #expect(!single.isEmpty && single.count <= 10, "\(single.count) lines")
        #expect(summaries.count <= 2)
        #expect(single.count + suppressed == flood, "\(single.count) logged + \(suppressed) counted")
        #expect(!server.log.contains(unknownToken) && !server.log.contains(revokedToken), "a token was logged")
        let prefix = String(digest(.sha256, Array(unknownToken.utf8)).hexString.prefix(8))
        #expect(single.contains { $0.contains(prefix) && $0.contains("an unknown token") }, "\(single)")
        #expect(single.contains { $0.contains("client=127.0.0.1:") && $0.contains("GET /v1/keys") })
        // The revoked device's refusal is among the first five (every third request), so it is written out.
        let revoked = try #require(single.first(where: { $0.contains("revoked device") }), "\(single)")
        #expect(revoked.contains(#"old\u{1B}[31mdevice\nforged"#), "\(revoked)")
        #expect(!lines.contains { $0.hasPrefix("forged") })
        #expect(InspectionOwnershipTests.rawControls(in: server.log, allowing: ["\n"]).isEmpty)
    }

    @Test("under umask 022 the database, its WAL and its shared memory file are created 0600")
    func privateDatabase() async throws {
        let bench = try ServerBench(.sqlite)
        let path = bench.path("server.sqlite")
        // The bench's database, made again under the umask most systems have.
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        let initialised = try ServerBench.run(
            "/bin/sh", ["-c", "umask 022 && exec \"$0\" init --db \"$1\"", ServerBench.binary, path])
        #expect(initialised.status == 0, "\(initialised.stderr)")
        #expect(try Self.mode(path) == 0o600)

        // The server writes (an upload) while it runs: the WAL and the shared memory file exist.
        let token = try bench.addDevice("v1")
        let server = try bench.startServer(umask: "022")
        let upload = try await send(
            .POST, server.baseURL + "/v1/inspections", token: token,
            body: try WireFormat.encode(InspectionBatch(records: [InspectionOwnershipTests.record("r")])))
        #expect(upload.status == 200, "\(upload.text)")
        for suffix in ["", "-wal", "-shm"] {
            #expect(FileManager.default.fileExists(atPath: path + suffix), "\(path + suffix) missing")
            #expect(try Self.mode(path + suffix) == 0o600, "\(suffix)")
        }
        #expect(!server.log.contains("readable by every user"))
        server.stop()

        // A database made world-readable (by hand, or by a version before this one): opening it takes the bits
        // for others (and group write) off it and its companions, and says so; group read is kept.
        for suffix in ["", "-wal", "-shm"] {
            // A clean shutdown may have removed the companions: empty ones are what SQLite finds after it.
            if !FileManager.default.fileExists(atPath: path + suffix) {
                #expect(FileManager.default.createFile(atPath: path + suffix, contents: nil))
            }
            try FileManager.default.setAttributes([.posixPermissions: 0o666], ofItemAtPath: path + suffix)
        }
        let narrowed = try bench.startServer()
        #expect(narrowed.log.contains("was readable by every user"), "\(narrowed.log)")
        for suffix in ["", "-wal", "-shm"] {
            #expect(try Self.mode(path + suffix) == 0o640, "\(suffix)")
        }
        narrowed.stop()
    }

    @Test("a database path that is a symbolic link is refused, dangling or not; nothing is created through it")
    func databaseLinkRefused() throws {
        let bench = try ServerBench(.sqlite)
        let real = bench.path("server.sqlite")
        let dangling = bench.path("planted.sqlite")
        let target = bench.path("attacker-chosen.sqlite")
        try FileManager.default.createSymbolicLink(atPath: dangling, withDestinationPath: target)
        let created = try ServerBench.run(ServerBench.binary, ["init", "--db", dangling])
        #expect(created.status != 0)
        #expect(created.stderr.contains("symbolic link"), "\(created.stderr)")
        #expect(!FileManager.default.fileExists(atPath: target))

        #expect(FileManager.default.fileExists(atPath: real))
        let linked = bench.path("linked.sqlite")
        try FileManager.default.createSymbolicLink(atPath: linked, withDestinationPath: real)
        let opened = try ServerBench.run(ServerBench.binary, ["devices", "list", "--db", linked])
        #expect(opened.status != 0)
        #expect(opened.stderr.contains("symbolic link"), "\(opened.stderr)")
    }

    static func mode(_ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return ((attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1) & 0o777
    }
}
