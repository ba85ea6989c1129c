import Foundation
import TestSupport
import Testing

@Suite("farecheck command line")
struct CLITests {
    let bench = Workbench()

    /// Generates a key with the CLI and returns its kid.
    func generate(_ alg: String, file: String, issuer: String = "demo-transit") throws -> String {
        let run = try bench.farecheck(["keys", "generate", "--issuer", issuer, "--alg", alg, "--out", bench.path(file)])
        #expect(run.status == 0, "\(run.stderr)")
        let kid = try #require(run.text.split(separator: " ").dropFirst().first)
        return String(kid)
    }

    @Test("round trip for every algorithm and barcode: keys generate → issue → render → scan → verify")
    func roundTrips() throws {
        for alg in ["ES256", "EdDSA", "PS256"] {
            let kid = try generate(alg, file: "\(alg).key")
            for barcode in ["qr", "aztec"] {
                let png = bench.path("\(alg)-\(barcode).png")
                let issued = try bench.farecheck([
                    "issue", "--key", bench.path("\(alg).key"), "--product", "day", "--zones", "A,B", "--category",
                    "adult",
                    "--holder", "ID ****1234", "--valid-from", "now-1h", "--valid-until", "now+1d", "--barcode",
                    barcode,
                    "--out", png, "--payload-out", bench.path("\(alg)-\(barcode).bin"),
                ])
                #expect(issued.status == 0, "\(issued.stderr)")
                let scan = try bench.farecheck(["scan", "--json", png])
                #expect(scan.status == 0)
                let symbol = try #require(scan.jsonLines.first)
                #expect(symbol["symbology"] as? String == barcode)
                let payload = try #require(FileManager.default.contents(atPath: bench.path("\(alg)-\(barcode).bin")))
                #expect(symbol["payloadBase64"] as? String == payload.base64EncodedString())
                #expect(symbol["byteCount"] as? Int == payload.count)

                let verify = try bench.farecheck(["verify", "--image", png, "--json"])
                #expect(verify.status == 0, "\(alg) \(barcode): \(verify.text) \(verify.stderr)")
                let verdict = try #require(verify.jsonLines.first)
                #expect(verdict["verdict"] as? String == "valid")
                #expect(verdict["signature"] as? String == "valid")
                #expect(verdict["format"] as? String == "fc1")
                #expect(verdict["issuer"] as? String == "demo-transit")
                #expect(verdict["keyId"] as? String == kid)
                #expect(verdict["product"] as? String == "day")
                #expect(verdict["zones"] as? [String] == ["A", "B"])
                #expect(verdict["holder"] as? String == "ID ****1234")
                // FC1's `h` is the issuer's own words: the holder check's note, as written.
                #expect(verdict["holderCheck"] as? [String: String] == ["note": "ID ****1234"])
                #expect(verdict["validFrom"] is String)
                #expect(verdict["validUntil"] is String)
                #expect(verdict["warnings"] as? [String] == [])
                #expect((verdict["ticketId"] as? String)?.count == 32)
            }
        }
    }

    @Test("--version: both programs print one version from git, a Debian version (digits first, no spaces)")
    func version() throws {
        let bench = Workbench()
        let farecheck = try bench.farecheck(["--version"], useStore: false)
        let server = try bench.run(ReferenceServer.binary, ["--version"])
        #expect(farecheck.status == 0 && server.status == 0)
        let text = farecheck.text.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(text == server.text.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(text.first?.isNumber == true, "\(text)")
        #expect(text.allSatisfy { $0.isLetter || $0.isNumber || "+.~".contains($0) }, "\(text)")
        // In a git checkout the version names the commit (a tag, or the day and hash before any tag).
        #expect(text.contains("+git") || text.contains(".g") || !text.contains("+"), "\(text)")
        #expect(text != "0.0.0+unknown")
    }

    @Test("exit status: 0 valid, 1 for any other verdict, 2 when the command cannot run")
    func exitStatus() throws {
        _ = try generate("ES256", file: "k.key")
        try bench.farecheck([
            "issue", "--key", bench.path("k.key"), "--valid-from", "2020-01-01T00:00:00Z", "--valid-until",
            "2020-01-02T00:00:00Z", "--payload-out", bench.path("old.bin"),
        ])
        let expired = try bench.farecheck(["verify", "--payload-file", bench.path("old.bin")])
        #expect(expired.status == 1)
        #expect(expired.text.hasPrefix("EXPIRED"))
        let then = try bench.farecheck([
            "verify", "--payload-file", bench.path("old.bin"), "--at", "2020-01-01T12:00:00Z",
        ])
        #expect(then.status == 0, "\(then.text)")
        #expect(then.text.hasPrefix("VALID"))
        let missing = try bench.farecheck(["verify", "--payload-file", bench.path("nope.bin")])
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("no such file"))
        _ = FileManager.default.createFile(
            atPath: bench.path("junk.sqlite"), contents: Data("not a database at all".utf8))
        let badStore = try bench.farecheck([
            "verify", "--payload-file", bench.path("old.bin"), "--db", bench.path("junk.sqlite"),
        ])
        #expect(badStore.status == 2)
        #expect(badStore.stderr.contains("not a SQLite database"))
        #expect(FileManager.default.contents(atPath: bench.path("junk.sqlite")) == Data("not a database at all".utf8))
    }

    @Test("verify reads the payload from standard input, text with a trailing newline included")
    func standardInput() throws {
        _ = try generate("EdDSA", file: "k.key")
        try bench.farecheck([
            "issue", "--key", bench.path("k.key"), "--barcode", "qr", "--payload-out", bench.path("t.txt"),
        ])
        let payload = try #require(FileManager.default.contents(atPath: bench.path("t.txt")))
        #expect(payload.starts(with: Data("FC1:".utf8)))
        let run = try bench.farecheck(["verify", "-", "--json"], stdin: Array(payload) + [0x0A])
        #expect(run.status == 0)
        #expect(run.jsonLines.first?["verdict"] as? String == "valid")
        let forged = try bench.farecheck(["verify", "-"], stdin: Array("FC1:NOT+REALLY+A+TICKET".utf8))
        #expect(forged.status == 1)
        #expect(forged.text.hasPrefix("MALFORMED"))
    }

    @Test("revoking a ticket and a key turns their tickets revoked")
    func revoke() throws {
        let kid = try generate("ES256", file: "k.key")
        try bench.farecheck([
            "issue", "--key", bench.path("k.key"), "--ticket-id", "0badc0de", "--payload-out", bench.path("a.bin"),
        ])
        try bench.farecheck([
            "issue", "--key", bench.path("k.key"), "--ticket-id", "600d", "--payload-out", bench.path("b.bin"),
        ])
        let revoke = try bench.farecheck([
            "revoke", "--issuer", "demo-transit", "--ticket-id", "0BADC0DE", "--reason", "reported stolen",
        ])
        #expect(revoke.status == 0, "\(revoke.stderr)")
        let a = try bench.farecheck(["verify", "--payload-file", bench.path("a.bin"), "--json"])
        #expect(a.status == 1)
        #expect(a.jsonLines.first?["verdict"] as? String == "revoked")
        #expect((a.jsonLines.first?["reason"] as? String)?.contains("reported stolen") == true)
        #expect(try bench.farecheck(["verify", "--payload-file", bench.path("b.bin")]).status == 0)
        #expect(try bench.farecheck(["revoke", "--key", kid]).status == 0)
        let b = try bench.farecheck(["verify", "--payload-file", bench.path("b.bin"), "--json"])
        #expect(b.jsonLines.first?["verdict"] as? String == "revoked")
        let list = try bench.farecheck(["keys", "list", "--json"])
        #expect(list.jsonLines.first?["revoked"] as? Bool == true)
    }

    @Test("keys import: certificate (PEM and DER) and public key, kid rules, validity from the certificate")
    func importKeys() throws {
        try bench.shell("openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out signer.pem")
        try bench.shell("openssl req -x509 -new -key signer.pem -subj /CN=other-transit -days 30 -out cert.pem")
        try bench.shell("openssl x509 -in cert.pem -outform DER -out cert.der")
        try bench.shell("openssl pkey -in signer.pem -pubout -out pub.pem")
        let certKid = try bench.shell(
            "openssl x509 -in cert.pem -outform DER | openssl dgst -sha256 -binary | head -c 8 | od -An -tx1 | tr -d ' \\n'"
        ).text

        let imported = try bench.farecheck(["keys", "import", bench.path("cert.pem"), "--issuer", "other-transit"])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.text.contains(certKid))
        var list = try bench.farecheck(["keys", "list", "--json"]).jsonLines
        #expect(list.count == 1)
        #expect(list.first?["keyId"] as? String == certKid)
        #expect(list.first?["algorithm"] as? String == "ES256")
        #expect(list.first?["notAfter"] is String)

        // The same key under an explicit kid, from DER, replaces nothing but adds a second entry.
        #expect(
            try bench.farecheck([
                "keys", "import", bench.path("cert.der"), "--issuer", "other-transit", "--kid", "00112233",
            ]).status == 0)
        #expect(
            try bench.farecheck([
                "keys", "import", bench.path("pub.pem"), "--issuer", "other-transit", "--kid", "44556677",
            ]).status == 0)
        list = try bench.farecheck(["keys", "list", "--json"]).jsonLines
        #expect(Set(list.compactMap { $0["keyId"] as? String }) == [certKid, "00112233", "44556677"])

        // A ticket signed with the OpenSSL-made key verifies against the imported certificate.
        try bench.farecheck([
            "issue", "--key", bench.path("signer.pem"), "--issuer", "other-transit", "--kid", certKid, "--payload-out",
            bench.path("t.bin"),
        ])
        let verdict = try bench.farecheck(["verify", "--payload-file", bench.path("t.bin")])
        #expect(verdict.status == 0, "\(verdict.text)")

        // A private key given by mistake, and garbage, are refused with a reason.
        let wrong = try bench.farecheck(["keys", "import", bench.path("signer.pem"), "--issuer", "x"])
        #expect(wrong.status == 2)
        #expect(wrong.stderr.lowercased().contains("private key"))
        _ = FileManager.default.createFile(atPath: bench.path("junk"), contents: Data([1, 2, 3]))
        #expect(try bench.farecheck(["keys", "import", bench.path("junk"), "--issuer", "x"]).status == 2)

        #expect(try bench.farecheck(["keys", "remove", "44556677"]).status == 0)
        #expect(try bench.farecheck(["keys", "remove", "44556677"]).status == 2)
        #expect(try bench.farecheck(["keys", "list", "--json"]).jsonLines.count == 2)
    }

    @Test("the generated private key file is private and names its issuer and kid")
    func keyFile() throws {
        let kid = try generate("EdDSA", file: "k.key")
        let attributes = try FileManager.default.attributesOfItem(atPath: bench.path("k.key"))
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let text = try String(contentsOfFile: bench.path("k.key"), encoding: .utf8)
        #expect(text.contains("# kid: \(kid)"))
        #expect(text.contains("# issuer: demo-transit"))
        // OpenSSL reads it as an ordinary private key.
        #expect(try bench.shell("openssl pkey -in k.key -noout").status == 0)
        // And it is never overwritten by accident.
        let again = try bench.farecheck(["keys", "generate", "--issuer", "demo-transit", "--out", bench.path("k.key")])
        #expect(again.status == 2)
    }

    @Test("scan --raw writes the payload bytes exactly, and exits 1 when there is no symbol")
    func scanRaw() throws {
        _ = try generate("ES256", file: "k.key")
        try bench.farecheck([
            "issue", "--key", bench.path("k.key"), "--barcode", "aztec", "--out", bench.path("t.png"), "--payload-out",
            bench.path("t.bin"),
        ])
        let raw = try bench.farecheck(["scan", "--raw", bench.path("t.png")])
        #expect(raw.status == 0)
        #expect(Data(raw.stdout) == FileManager.default.contents(atPath: bench.path("t.bin")))
        try bench.shell(
            "printf 'P5\\n8 8\\n255\\n' > blank.pgm && head -c 64 /dev/zero | tr '\\0' '\\377' >> blank.pgm")
        let none = try bench.farecheck(["scan", "--raw", bench.path("blank.pgm")])
        #expect(none.status == 1)
        #expect(none.stdout.isEmpty)
    }

    @Test("the demo runs the whole pipeline with every verdict as expected")
    func demo() throws {
        let run = try bench.farecheck(["demo", "--out", bench.path("demo"), "--json"], useStore: false)
        #expect(run.status == 0, "\(run.text) \(run.stderr)")
        let verdicts = run.jsonLines.compactMap { $0["verdict"] as? String }
        #expect(Set(verdicts) == ["valid", "expired", "not-yet-valid", "revoked", "invalid-signature"])
    }
}
