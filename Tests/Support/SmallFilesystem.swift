import Foundation
import Glibc

/// A real, small filesystem (tmpfs of a few megabytes) mounted for one test, so that a full disk is a real
/// `ENOSPC` from the kernel, not a simulated error. Needs root (or CAP_SYS_ADMIN); `canMount` says whether this
/// machine allows it, for the test's `.enabled(if:)` condition.
public final class SmallFilesystem {
    /// Where it is mounted.
    public let path: String
    private var filler: String { path + "/filler" }

    /// Mounts a tmpfs of `kibibytes` at a new temporary directory.
    public init(kibibytes: Int) throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("farecheck-fs-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let mounted = try run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(kibibytes)k,mode=0755", "tmpfs", path])
        guard mounted == 0 else {
            try? FileManager.default.removeItem(atPath: path)
            throw Failure(message: "mount -t tmpfs failed with status \(mounted)")
        }
    }

    deinit {
        _ = try? run("/bin/umount", ["-l", path])
        try? FileManager.default.removeItem(atPath: path)
    }

    /// Whether a tmpfs can be mounted here (root with CAP_SYS_ADMIN, `mount` present): probed once.
    public static let canMount: Bool = {
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/bin/mount") else { return false }
        return (try? SmallFilesystem(kibibytes: 64)) != nil
    }()

    /// Fills the filesystem to the last byte with a filler file (appended to if it exists).
    public func fill() {
        let fd = open(filler, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        guard fd >= 0 else { return }
        defer { close(fd) }
        let chunk = [UInt8](repeating: 0x5A, count: 4096)
        // Page-sized writes until the kernel says no; then single bytes for what is left of a page.
        while chunk.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) > 0 {}
        while chunk.withUnsafeBytes({ write(fd, $0.baseAddress, 1) }) > 0 {}
    }

    /// Removes the filler: the space comes back.
    public func free() {
        unlink(filler)
    }

    /// Bytes free, as `statvfs` reports them.
    public var freeBytes: Int {
        var stats = statvfs()
        guard statvfs(path, &stats) == 0 else { return -1 }
        return Int(stats.f_bavail) * Int(stats.f_frsize)
    }

    public struct Failure: Error, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }

    private func run(_ tool: String, _ arguments: [String]) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }
}
