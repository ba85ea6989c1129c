import Foundation
import TestSupport
import Testing

/// A store path with no store: refused by what reads a store, made only by what makes one; the journal made by no
/// command.
@Suite("farecheck's store paths")
struct StorePathCLITests {
    let bench = Workbench()

    /// Runs farecheck with `$FARECHECK_DB` naming `db` (the bench's store unless given).
    func farecheck(_ arguments: [String], db: String? = nil, stdin: [UInt8]? = nil) throws -> Run {
        var environment = ProcessInfo.processInfo.environment
        environment["FARECHECK_DB"] = db ?? bench.db
        return try bench.run(Workbench.farecheck, arguments, stdin: stdin, environment: environment)
    }

    /// The files and folders under the bench's directory, relative to it.
    func contents() throws -> [String] {
        try FileManager.default.subpathsOfDirectory(atPath: bench.directory).sorted()
    }

    @Test("a store path with no store: what reads a store refuses it (exit 2, naming it) and makes no file or folder")
    func missingStoreRefused() throws {
        let typo = bench.path("x/typo.sqlite")
        let verify = try farecheck(["verify", "--db", typo, "-"], db: bench.db)
        #expect(verify.status == 2)
        #expect(
            verify.stderr
                == "farecheck: no store at \(typo) (--db): check the path, or `farecheck keys import` or "
                + "`farecheck keys generate` makes one\n", "\(verify.stderr)")
        let byVariable = try farecheck(["keys", "list"], db: bench.path("missing.sqlite"))
        #expect(byVariable.status == 2)
        #expect(byVariable.stderr.contains("no store at \(bench.path("missing.sqlite")) ($FARECHECK_DB)"))
        for arguments in [
            ["keys", "list", "--db", typo], ["keys", "remove", "--db", typo, "0a0b"], ["staff", "list", "--db", typo],
            ["staff", "remove", "--db", typo, "anna"], ["revoke", "--blocklists", "--db", typo],
        ] {
            let run = try farecheck(arguments)
            #expect(run.status == 2 && run.stderr.contains("no store at \(typo)"), "\(arguments): \(run.stderr)")
        }
        // What changes a store but does not make one offers --create.
        let revoke = try farecheck(["revoke", "--db", typo, "--issuer", "demo-transit", "--ticket-id", "0a"])
        #expect(revoke.status == 2 && revoke.stderr.contains("pass --create to make a new store there"))
        let staff = try farecheck(["staff", "add", "--db", typo, "anna"], stdin: Array("482913\n".utf8))
        #expect(staff.status == 2 && staff.stderr.contains("pass --create"), "\(staff.stderr)")
        let made = try contents()
        #expect(made.isEmpty, "\(made)")
    }

    @Test("what makes a store creates it, folders included, and says so; no command makes the journal")
    func storesMade() throws {
        let made = bench.path("new/dir/store.sqlite")
        let imported = try farecheck([
            "keys", "import", "--db", made, Fixtures.path("uic") + "/0080-00007.pem", "--issuer", "0080", "--kid",
            "00007",
        ])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stderr.contains("farecheck: made a new store at \(made)"))
        #expect(FileManager.default.fileExists(atPath: made))
        let again = try farecheck(["keys", "list", "--db", made])
        #expect(again.status == 0 && again.stderr.isEmpty, "\(again.stderr)")
        #expect(try farecheck(["verify", "--db", made, "-"]).status == 1)
        let revoked = try farecheck(
            ["revoke", "--create", "--db", bench.path("r.sqlite"), "--issuer", "demo-transit", "--ticket-id", "0a"])
        #expect(revoked.status == 0, "\(revoked.stderr)")
        // Neither the journal nor its reserve: only the daemon journals.
        let journals = try contents().filter { $0.contains("journal") }
        #expect(journals.isEmpty, "\(journals)")
    }
}
