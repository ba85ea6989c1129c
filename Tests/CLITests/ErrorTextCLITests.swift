import Foundation
import Glibc
import TestSupport
import Testing

/// Errors a person can act on, and one exit status table (issue 52): the words of the common failures, exit 2 for
/// whatever could not be read (in `scan` as in `verify`), JSON documents with `--json`, one spelling of `keyId`.
@Suite("farecheck's errors and exit statuses")
struct ErrorTextCLITests {
    let bench = Workbench()

    @Test("scan: the good image's symbol is printed, the missing one named, and the status is 2")
    func scanGoodAndMissing() throws {
        let issued = try bench.farecheck(
            [
                "issue", "--key", repositoryRoot + "/Keys/demo-transit-es256.key", "--out", bench.path("good.png"),
            ], useStore: false)
        try #require(issued.status == 0, "\(issued.stderr)")
        let run = try bench.farecheck(["scan", bench.path("good.png"), bench.path("missing.png")], useStore: false)
        #expect(run.status == 2)
        #expect(run.text.hasPrefix(bench.path("good.png")), "\(run.text)")
        #expect(run.stderr.contains("farecheck scan: \(bench.path("missing.png")): no such file or directory\n"))
        // With --json, every file is in the JSON: the symbol, and the error.
        let json = try bench.farecheck(
            ["scan", "--json", bench.path("good.png"), bench.path("missing.png")], useStore: false)
        #expect(json.status == 2)
        let lines = json.jsonLines
        #expect(lines.count == 2, "\(json.text)")
        #expect(
            lines.contains { $0["file"] as? String == bench.path("good.png") && $0["symbology"] as? String == "qr" })
        let error = lines.first { $0["file"] as? String == bench.path("missing.png") }?["error"] as? [String: Any]
        #expect(error?["code"] as? String == "could-not-run")
    }

    @Test("a text file given as an image: exit 2 for scan as for verify --image")
    func textAsImage() throws {
        try "not an image\n".write(toFile: bench.path("notes.png"), atomically: true, encoding: .utf8)
        let scan = try bench.farecheck(["scan", bench.path("notes.png")], useStore: false)
        #expect(scan.status == 2, "\(scan.stderr)")
        bench.withEmptyStore()
        let verify = try bench.farecheck(["verify", "--image", bench.path("notes.png")])
        #expect(verify.status == 2, "\(verify.stderr)")
    }

    @Test("verify --json of a file that is not there: a JSON error document on standard output, exit 2")
    func verifyMissingAsJSON() throws {
        bench.withEmptyStore()
        let run = try bench.farecheck(["verify", "--json", "--payload-file", bench.path("none.txt")])
        #expect(run.status == 2)
        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(run.stdout)) as? [String: Any], "\(run.text)")
        let error = try #require(document["error"] as? [String: Any])
        #expect(error["code"] as? String == "could-not-run")
        #expect((error["message"] as? String)?.contains(bench.path("none.txt")) == true, "\(error)")
        // Without --json, standard output stays empty.
        let plain = try bench.farecheck(["verify", "--payload-file", bench.path("none.txt")])
        #expect(plain.status == 2 && plain.text.isEmpty)
    }

    @Test("a private key where a public one belongs: what to do, and no Swift case name")
    func privateKeyImported() throws {
        let run = try bench.farecheck([
            "keys", "import", repositoryRoot + "/Keys/demo-transit-es256.key", "--issuer", "demo-transit",
        ])
        #expect(run.status == 2)
        #expect(run.stderr.contains("holds a private key"), "\(run.stderr)")
        #expect(run.stderr.contains("openssl pkey -in KEYFILE -pubout"), "\(run.stderr)")
        #expect(!run.stderr.contains("["), "\(run.stderr)")
    }

    @Test("keys list --json: one array, [] for an empty store, the key id spelt keyId as verify --json spells it")
    func keyIdSpelling() throws {
        bench.withEmptyStore()
        let empty = try bench.farecheck(["keys", "list", "--json"])
        #expect(empty.status == 0 && empty.text == "[]\n", "\(empty.text)")
        let generated = try bench.farecheck([
            "keys", "generate", "--issuer", "demo-transit", "--alg", "ES256", "--out", bench.path("demo.key"),
        ])
        try #require(generated.status == 0, "\(generated.stderr)")
        let list = try bench.farecheck(["keys", "list", "--json"])
        let key = try #require(list.jsonLines.first)
        #expect(key["keyId"] is String && key["kid"] == nil, "\(list.text)")
        let issued = try bench.farecheck([
            "issue", "--key", bench.path("demo.key"), "--payload-out", bench.path("t.txt"), "--out",
            bench.path("t.png"),
        ])
        try #require(issued.status == 0)
        let verdict = try #require(
            try bench.farecheck(["verify", "--json", "--payload-file", bench.path("t.txt")])
                .jsonLines.first)
        #expect(verdict["keyId"] as? String == key["keyId"] as? String)
    }

    @Test("farecheck-server serve on a port another program holds: the address and what to do, in one line")
    func serverPortInUse() throws {
        let holder = try LoopbackPort.listening()
        let port = holder.port
        let server = (Workbench.farecheck as NSString).deletingLastPathComponent + "/farecheck-server"
        let run = try bench.run(
            server,
            [
                "serve", "--db", bench.path("server.sqlite"), "--listen", "127.0.0.1:\(port)", "--anchor-key",
                repositoryRoot + "/Keys/demo-anchor.key",
            ])
        #expect(run.status == 2)
        #expect(
            run.stderr.hasSuffix(
                "farecheck-server: cannot listen on 127.0.0.1:\(port): another program already listens there "
                    + "(`ss -ltnp` names it); stop it or change --listen\n"), "\(run.stderr)")
        withExtendedLifetime(holder) {}  // the port stays held until the server has tried it
    }

    @Test("a single-value option given twice is refused, and a misspelt one is named with the one meant (exit 64)")
    func repeatedAndUnknownOptions() throws {
        bench.withEmptyStore()
        let twice = try bench.farecheck(["verify", "--image", "a.png", "--image", "b.png"])
        #expect(twice.status == 64)
        #expect(twice.stderr.hasPrefix("Error: --image is given more than once; give it once\n"), "\(twice.stderr)")
        #expect(twice.stderr.contains("See 'farecheck verify --help'"), "\(twice.stderr)")
        // Where verify's optional argument would swallow it, the misspelt option is still caught.
        let typo = try bench.farecheck(["verify", "--imgae", "a.png"])
        #expect(typo.status == 64)
        #expect(typo.stderr.hasPrefix("Error: unknown option --imgae; did you mean --image?\n"), "\(typo.stderr)")
        // Repeatable options stay repeatable.
        let anchors = try bench.farecheck(["sync", "--url", "http://127.0.0.1:9", "--url", "http://127.0.0.1:9", "--x"])
        #expect(anchors.status == 64 && anchors.stderr.contains("--x"), "\(anchors.stderr)")
        #expect(!anchors.stderr.contains("given more than once"))
        // With --json, the usage error is a JSON document.
        let json = try bench.farecheck(["verify", "--json", "--imgae", "a.png"])
        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(json.stdout)) as? [String: Any], "\(json.text)")
        #expect((document["error"] as? [String: Any])?["code"] as? String == "usage")
    }

    @Test(
        "a store on a full disk: what happened, to which file and what to do, without the database library's text",
        .enabled(if: SmallFilesystem.canMount, "mounting a small tmpfs needs root (CAP_SYS_ADMIN); skipped here"))
    func fullDisk() throws {
        let disk = try SmallFilesystem(kibibytes: 4 * 1024)
        let db = disk.path + "/store.sqlite"
        let made = try bench.farecheck(
            [
                "keys", "generate", "--issuer", "demo-transit", "--alg", "ES256", "--out", bench.path("k.key"), "--db",
                db,
            ],
            useStore: false)
        try #require(made.status == 0, "\(made.stderr)")
        disk.fill()
        let run = try bench.farecheck(
            ["revoke", "--issuer", "demo-transit", "--ticket-id", "0a0b", "--reason", "lost", "--db", db],
            useStore: false)
        #expect(run.status == 2)
        #expect(
            run.stderr.hasSuffix(
                "(\(db)); the disk holding it is full: free some space (`df -h \(disk.path)`) and try again\n"),
            "\(run.stderr)")
        #expect(!run.stderr.contains("SQLite error"), "\(run.stderr)")
        #expect(run.stderr.split(separator: "\n").count == 1, "\(run.stderr)")
    }
}
