import Foundation
import Glibc
import TestSupport
import Testing

/// What `farecheck daemon` and `daemon --check` say about the machine they start on (issue 52): a port another
/// program holds, a second daemon on the same store, an empty store, an absent scanner, a sync server that is down.
/// Each message is checked word for word: it is what a person reads to fix the problem.
@Suite("daemon start checks", .serialized, .timeLimit(.minutes(3)))
struct DaemonStartChecksTests {
    /// A configuration with an image source (an empty directory), the bench's store and socket, and `more`.
    func config(_ bench: Workbench, listen: String = "127.0.0.1:0", more: String = "") throws -> String {
        try FileManager.default.createDirectory(atPath: bench.path("images"), withIntermediateDirectories: true)
        let path = bench.path("farecheck-\(UUID().uuidString.prefix(8)).toml")
        try """
        store = "\(bench.db)"

        [[source]]
        images = "\(bench.path("images"))"

        [output]
        stdout = false
        socket = "\(bench.path("verdicts.sock"))"

        [http]
        listen = "\(listen)"
        \(more)
        """.write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o600)
        return path
    }

    @Test("a port another program holds: --check and the start both say so in one line, with the address")
    func portInUse() throws {
        let bench = Workbench()
        let holder = try LoopbackPort.listening()
        let path = try config(bench, listen: "127.0.0.1:\(holder.port)")
        let expected =
            "farecheck: cannot listen on 127.0.0.1:\(holder.port): another program already listens there "
            + "(`ss -ltnp` names it); stop it or change [http] listen (or --http)"
        let check = try bench.farecheck(["daemon", "--config", path, "--check"], useStore: false)
        #expect(check.status == 2)
        #expect(check.stderr.contains(expected + "\n"), "\(check.stderr)")
        #expect(check.stderr.contains("not usable (1 problem above)"), "\(check.stderr)")
        #expect(!check.text.contains("usable"))
        let start = try bench.farecheck(["daemon", "--config", path], useStore: false)
        #expect(start.status == 2)
        #expect(start.stderr.hasSuffix(expected + "\n"), "\(start.stderr)")
        #expect(!start.stderr.contains("errno"))
        withExtendedLifetime(holder) {}  // the port stays held until both runs are done
    }

    @Test("a second daemon on one configuration refuses to start, naming the first's pid; --check leaves it alone")
    func oneDaemonPerStore() async throws {
        let bench = Workbench()
        let path = try config(bench)
        let first = try await DaemonProcess.start(config: path)
        let second = try bench.farecheck(["daemon", "--config", path], useStore: false)
        #expect(second.status == 2)
        #expect(
            second.stderr.contains(
                "farecheck: another farecheck daemon (pid \(first.pid)) already runs on the store \(bench.db); "
                    + "stop it first"),
            "\(second.stderr)")
        // The first still has its socket and its page.
        #expect(FileManager.default.fileExists(atPath: bench.path("verdicts.sock")))
        #expect(await first.get("/healthz") != nil)
        // --check beside a running daemon: its listeners are not reported as in use.
        let check = try bench.farecheck(["daemon", "--config", path, "--check"], useStore: false)
        #expect(check.status == 0, "\(check.stderr)")
        #expect(check.stderr.contains("note: a daemon (pid \(first.pid)) runs on the store \(bench.db)"))
        #expect(await first.stop() == 0)
        // Once it stopped (or was killed: the kernel drops the lock), the next one starts.
        let next = try await DaemonProcess.start(config: path)
        #expect(await next.stop(signal: SIGKILL) != nil)
        let afterKill = try await DaemonProcess.start(config: path)
        #expect(await afterKill.stop() == 0)
    }

    @Test("--check warns of an empty store and an absent scanner, and refuses an image directory that is not there")
    func devicesAndStore() throws {
        let bench = Workbench()
        let path = try config(
            bench,
            more: """

                [[scanner]]
                name = "front-door"
                device = "\(bench.path("ttyACM9"))"
                protocol = "ssi"

                [[source]]
                name = "missing"
                images = "\(bench.path("no-such-directory"))"
                """)
        let check = try bench.farecheck(["daemon", "--config", path, "--check"], useStore: false)
        #expect(check.status == 2)
        let lines = check.stderr.split(separator: "\n").map(String.init)
        #expect(
            lines.contains(
                "farecheck: warning: the store \(bench.db) holds no keys: every scan reads unknown-key; import keys "
                    + "first (`farecheck keys import`, or configure [sync])"), "\(check.stderr)")
        #expect(
            lines.contains(
                "farecheck: warning: scanner front-door: \(bench.path("ttyACM9")) is absent now; the daemon starts "
                    + "without it and opens it when it appears"), "\(check.stderr)")
        #expect(
            lines.contains(
                "farecheck: source missing: there is no image or directory at \(bench.path("no-such-directory"))"),
            "\(check.stderr)")
        // The store was made, as the daemon makes it.
        #expect(FileManager.default.fileExists(atPath: bench.db))
    }

    @Test("a sync server that is down: /healthz names it in lastSyncError, a scan does not clear it, status ok")
    func lastSyncError() async throws {
        let bench = Workbench()
        let down = try LoopbackPort.unused()
        let path = try config(
            bench,
            more: """

                [sync]
                url = "http://127.0.0.2:\(down)"
                token = "device-token"
                anchors = ["demo"]
                allow_demo_anchor = true
                interval = 1
                """)
        let daemon = try await DaemonProcess.start(config: path)
        var health: [String: Any] = [:]
        for _ in 0..<200 where health["lastSyncError"] == nil {
            if let body = await daemon.get("/healthz"),
                let object = try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any]
            {
                health = object
            }
            if health["lastSyncError"] == nil { try await Task.sleep(for: .milliseconds(100)) }
        }
        let message = try #require(health["lastSyncError"] as? String, "\(health)")
        #expect(
            message
                == "Cannot get the key bundle from http://127.0.0.2:\(down): connection refused: nothing listens "
                + "there (is the server running, and are the host and port right?).")
        #expect(health["lastSyncErrorAt"] is String)
        // Its kind, which the page says in its language.
        #expect(health["lastSyncProblem"] as? String == "unreachable", "\(health)")
        #expect(health["status"] as? String == "ok", "a validator works offline: \(health)")
        #expect(await daemon.stop() == 0)
    }
}
