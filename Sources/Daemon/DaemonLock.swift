import FareCore
import Foundation
import Glibc
import SystemCalls

/// The lock a running daemon holds on its store and on its verdict socket, so that a second daemon on the same
/// configuration (or on the same store, or the same socket) refuses to start, naming the first's pid, instead of
/// taking the socket from under it and fighting over the store.
///
/// Each lock is a file beside what it guards (`STORE.lock`, `SOCKET.lock`) with an exclusive `flock` and the
/// holder's pid in it. The kernel drops the lock when the process ends, whatever ends it (SIGKILL included), so a
/// lock file left behind by a dead daemon never stops the next one.
public final class DaemonLock: Sendable {
    /// The descriptors of the lock files, closed (and so unlocked) by `release()` or at exit.
    private let descriptors: [Int32]

    private init(descriptors: [Int32]) {
        self.descriptors = descriptors
    }

    /// The lock file guarding `path`.
    public static func lockPath(for path: String) -> String { path + ".lock" }

    /// Takes the locks on `store` and, when there is one, `socket`; throws `DaemonStartError` naming the daemon that
    /// holds either.
    public static func acquire(store: String, socket: String?) throws(DaemonStartError) -> DaemonLock {
        var descriptors: [Int32] = []
        do {
            descriptors.append(try lock(store, what: "store"))
            if let socket { descriptors.append(try lock(socket, what: "verdict socket")) }
        } catch {
            for descriptor in descriptors { close(descriptor) }
            throw error
        }
        return DaemonLock(descriptors: descriptors)
    }

    /// The pid of the daemon that holds the lock on `path` (0 when its pid cannot be read), or nil when no running
    /// process holds it.
    public static func holder(of path: String) -> Int32? {
        let file = lockPath(for: path)
        let descriptor = open(file, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        if flock(descriptor, LOCK_SH | LOCK_NB) == 0 {
            flock(descriptor, LOCK_UN)
            return nil
        }
        return pid(in: descriptor) ?? 0
    }

    /// Gives the locks up (the daemon is stopping).
    public func release() {
        for descriptor in descriptors { close(descriptor) }
    }

    private static func lock(_ path: String, what: String) throws(DaemonStartError) -> Int32 {
        let file = lockPath(for: path)
        let directory = (file as NSString).deletingLastPathComponent
        if !directory.isEmpty, !FileManager.default.fileExists(atPath: directory) {
            try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        }
        let descriptor = open(file, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            let reason = NetworkErrorText.systemReason(errno)
            throw DaemonStartError(
                message: "cannot make the lock file \(file) for the \(what) \(path): \(reason) (is its "
                    + "directory there, and writable by the daemon's user?)")
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let holder = pid(in: descriptor)
            close(descriptor)
            let named = holder.map { "pid \($0)" } ?? "its pid unknown"
            throw DaemonStartError(
                message: "another farecheck daemon (\(named)) already runs on the \(what) \(path); stop it first "
                    + "(`systemctl stop farecheck`, or kill \(holder.map(String.init) ?? "it")), or give this one "
                    + "its own store and socket")
        }
        // The holder's pid, for the message of the next one to try.
        let text = Array("\(getpid())\n".utf8)
        _ = ftruncate(descriptor, 0)
        _ = text.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        return descriptor
    }

    private static func pid(in descriptor: Int32) -> Int32? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        let text = String(decoding: buffer[..<count], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return Int32(text)
    }
}
