import Foundation
import Glibc
import TestSupport
import Testing

/// What `farecheck sync` prints around its answer (issue 52): progress on standard error, a server that is down in
/// words, and with `--json` always a JSON document on standard output.
@Suite("farecheck sync's output", .serialized, .timeLimit(.minutes(3)))
struct SyncCommandOutputTests {
    @Test("--progress: a line per revocation page on a pipe, then the totals and the rate; --quiet: none")
    func progress() throws {
        let bench = try SyncBench()
        for id in ["0a", "0b", "0c"] {
            try bench.server.admin(["revoke", "--issuer", "demo-transit", "--ticket-id", id, "--reason", "lost"])
        }
        let run = try bench.syncCommand(extra: ["--progress"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("revocations: 1 page applied, 3 added, 0 removed\n"), "\(run.stderr)")
        #expect(run.stderr.contains("revocations: 3 entries in "), "\(run.stderr)")
        #expect(run.text.contains("revocations: 3 added, 0 removed"), "\(run.text)")
        try bench.server.admin(["revoke", "--issuer", "demo-transit", "--ticket-id", "0d", "--reason", "lost"])
        let quiet = try bench.syncCommand(extra: ["--quiet"])
        #expect(quiet.status == 0 && quiet.stderr.isEmpty, "\(quiet.stderr)")
        let both = try bench.syncCommand(extra: ["--quiet", "--progress"])
        #expect(both.status == 64 && both.stderr.contains("--quiet and --progress cannot be combined"))
    }

    @Test("a server that is down: one line in words, exit 2; with --json the same message as a JSON document")
    func serverDown() throws {
        let bench = Workbench()
        try "device-token".write(toFile: bench.path("token"), atomically: true, encoding: .utf8)
        let url = "http://127.0.0.1:\(try LoopbackPort.unused())"
        let arguments = ["sync", "--url", url, "--token-file", bench.path("token"), "--demo-anchor", "--db", bench.db]
        let message =
            "not synced: Cannot get the key bundle from \(url): connection refused: nothing listens there (is the "
            + "server running, and are the host and port right?). [unreachable]"
        let run = try bench.farecheck(arguments, useStore: false)
        #expect(run.status == 2)
        #expect(run.stderr == "farecheck: \(message)\n", "\(run.stderr)")
        #expect(run.text.isEmpty)

        let json = try bench.farecheck(arguments + ["--json"], useStore: false)
        #expect(json.status == 2)
        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(json.stdout)) as? [String: Any], "\(json.text)")
        let error = try #require(document["error"] as? [String: Any])
        #expect(error["code"] as? String == "could-not-run")
        #expect(error["message"] as? String == message)
    }

    @Test("with --json, a usage error is a JSON document too (code usage, exit 64)")
    func usageErrorAsJSON() throws {
        let bench = Workbench()
        let run = try bench.farecheck(["sync", "--json", "--timeout", "0"], useStore: false)
        #expect(run.status == 64)
        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(run.stdout)) as? [String: Any], "\(run.text)")
        let error = try #require(document["error"] as? [String: Any])
        #expect(error["code"] as? String == "usage")
        #expect((error["message"] as? String)?.contains("--timeout is seconds from 0.1 to 3600") == true, "\(error)")
    }
}
