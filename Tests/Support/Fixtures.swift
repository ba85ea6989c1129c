import Foundation

/// The test fixtures: real sample tickets, key lists, certificates, blocklists, device recordings and inputs found by
/// fuzzing, all in one tree (`Tests/Fixtures/`), read in place from the repository rather than copied into a bundle
/// per test target.
///
/// Paths are relative to the tree, e.g. `uic/db-deutschland-ticket-2025.bin` or `vdv/certs`; what each folder holds
/// and where it came from is in its README.
public enum Fixtures {
    /// `Tests/Fixtures`, found from this source file.
    public static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures")

    /// The fixture at `path`, as a URL.
    public static func url(_ path: String) -> URL { directory.appendingPathComponent(path) }

    /// The fixture at `path`, as a file system path (for the programs a test runs).
    public static func path(_ path: String) -> String { url(path).path }

    /// The bytes of the fixture at `path`.
    public static func bytes(_ path: String) throws -> [UInt8] { Array(try Data(contentsOf: url(path))) }

    /// The fixture at `path` as UTF-8 text.
    public static func text(_ path: String) throws -> String { try String(contentsOf: url(path), encoding: .utf8) }

    /// The names of the files in the folder `path` whose names end with `suffix`, sorted.
    public static func names(in path: String, endingWith suffix: String = "") throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: self.path(path)).filter { $0.hasSuffix(suffix) }.sorted()
    }
}
