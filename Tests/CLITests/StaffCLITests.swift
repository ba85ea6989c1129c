import Foundation
import Glibc
import TestSupport
import Testing

/// `farecheck staff` as an operator runs it: PINs too short and staff ids that would forge log lines are refused,
/// the PIN secret is made private and used.
@Suite("farecheck staff")
struct StaffCLITests {
    let bench = Workbench()

    func add(_ arguments: [String], pin: String) throws -> Run {
        try bench.farecheck(["staff", "add", "--create"] + arguments, stdin: Array((pin + "\n").utf8))
    }

    func listed() throws -> String {
        try bench.farecheck(["staff", "list"]).text
    }

    @Test("a PIN shorter than the minimum (6, or --min-pin-length) is refused and nothing is saved")
    func shortPINsAreRefused() throws {
        for pin in ["", "1", "12345"] {
            let refused = try add(["K-1"], pin: pin)
            #expect(refused.status != 0)
            #expect(refused.stderr.contains("at least 6 characters"), "\(refused.stderr)")
        }
        let longer = try add(["K-1", "--min-pin-length", "8"], pin: "1234567")
        #expect(longer.status != 0)
        #expect(longer.stderr.contains("at least 8 characters"))
        #expect(try add(["K-1", "--min-pin-length", "3"], pin: "1234").status != 0, "a minimum below 4")
        #expect(!(try listed()).contains("K-1"))
        let saved = try add(["K-1"], pin: "123456")
        #expect(saved.status == 0, "\(saved.stderr)")
        #expect(try listed().contains("K-1"))
    }

    @Test("a staff id with control characters, a newline, a bidi override or a backslash is refused")
    func unprintableIDsAreRefused() throws {
        for id in ["K-1\nK-2", "K-\u{1B}[2J", "K\u{7F}1", "K\u{202E}1", #"K\1"#, "K\u{85}1"] {
            let refused = try add([id], pin: "482913")
            #expect(refused.status != 0, "\(id.debugDescription)")
            #expect(refused.stderr.contains("printable"), "\(refused.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: bench.db), "a refused staff id made a store")
    }

    @Test("staff secret makes a new 0600 file and refuses to replace one; add --pin-secret uses it, quietly")
    func pinSecret() throws {
        let previous = umask(0o022)
        defer { umask(previous) }
        let secret = bench.path("pin.secret")
        let made = try bench.farecheck(["staff", "secret", "--out", secret])
        #expect(made.status == 0, "\(made.stderr)")
        let mode = (try FileManager.default.attributesOfItem(atPath: secret)[.posixPermissions] as? NSNumber)?.intValue
        #expect(mode == 0o600)
        let original = try String(contentsOfFile: secret, encoding: .utf8)
        #expect(try bench.farecheck(["staff", "secret", "--out", secret]).status != 0)
        #expect(try String(contentsOfFile: secret, encoding: .utf8) == original)

        let withSecret = try add(["K-7", "--pin-secret", secret], pin: "482913")
        #expect(withSecret.status == 0, "\(withSecret.stderr)")
        #expect(!withSecret.stderr.contains("warning"))
        let without = try add(["K-8"], pin: "482913")
        #expect(without.status == 0)
        #expect(without.stderr.contains("warning: no PIN secret"))
        let missing = try add(["K-9", "--pin-secret", bench.path("no-such.secret")], pin: "482913")
        #expect(missing.status != 0)
        #expect(!(try listed()).contains("K-9"))
    }
}
