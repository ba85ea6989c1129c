import FareCore
import Foundation
import TestSupport
import Testing

/// The repository this test file lives in, and git's answers about it.
private enum Repository {
    static let root = repositoryRoot
    /// The file that holds `FarecheckRelease.date`.
    static let releaseFile = "Sources/FareCore/TrustedTime.swift"

    /// Standard output of `git arguments` in the repository, trimmed; `nil` when git fails or is missing.
    static func git(_ arguments: [String]) -> String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["git", "-C", root] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return nil }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return nil }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Whether the sources are a git checkout (not a source tarball).
    static var isCheckout: Bool { git(["rev-parse", "--is-inside-work-tree"]) == "true" }

    /// A commit time (`%ct`, Unix seconds) as a date.
    static func commitDate(_ arguments: [String]) -> Date? {
        git(["log", "-1", "--format=%ct"] + arguments).flatMap { TimeInterval($0) }.map {
            Date(timeIntervalSince1970: $0)
        }
    }
}

@Suite("The release date: the trusted-time floor every device starts from")
struct ReleaseDateTests {
    @Test(
        "not later than the commit that set it (or now, while it is being edited), at most 180 days older than the newest commit",
        .enabled(if: Repository.isCheckout, "needs a git checkout to compare with its history"))
    func keptHonestByHistory() throws {
        let release = FarecheckRelease.date
        // A whole day, 00:00 UTC, as the constant's comment says.
        #expect(release.timeIntervalSince1970.truncatingRemainder(dividingBy: 86_400) == 0)
        let edited = !(Repository.git(["status", "--porcelain", "--", Repository.releaseFile]) ?? "").isEmpty
        let setAt = try #require(
            edited ? Date() : Repository.commitDate(["--", Repository.releaseFile]), "no commit for the release file")
        // A release date in the future of the build would doubt every verdict on every device until then.
        #expect(
            release <= setAt,
            "FarecheckRelease.date \(release.formatted(.iso8601)) is after \(setAt.formatted(.iso8601)), when it was set"
        )
        // Stale is safe but catches less: bump it with each release.
        let newest = try #require(Repository.commitDate([]), "no commit")
        let stale = Comment(
            rawValue: "FarecheckRelease.date \(release.formatted(.iso8601)) is over 180 days older than the newest "
                + "commit (\(newest.formatted(.iso8601))): set it to the release's day")
        #expect(newest.timeIntervalSince(release) <= 180 * 86_400, stale)
    }
}
