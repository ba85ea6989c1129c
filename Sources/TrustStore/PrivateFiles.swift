import Foundation
import SystemCalls
import SystemPackage

#if canImport(Glibc)
    import Glibc
#endif

/// The validator's files (store, journal, reserve) hold who was inspected where and when, and the staff's PIN
/// hashes: they are made readable by their owner only, whatever the umask of the process that creates them.
///
/// A new file is created 0600 (SQLite then gives its `-wal` and `-shm` files the same mode). An existing file that
/// others may read (0644, as farecheck made them before) loses the bits for others and group write: 0644 becomes
/// 0640, so that a group the operator gave read access keeps it, and nobody else reads inspections any more.
enum PrivateFiles {
    /// The mode of a new file.
    static let newFileMode: mode_t = 0o600
    /// The bits an existing file keeps at most: owner read and write, group read.
    static let keptBits: mode_t = 0o740

    /// Creates `path` as an empty 0600 file when it does not exist (never following a symbolic link there), and
    /// narrows the mode of an existing one and of its SQLite companions (`-wal`, `-shm`).
    static func prepare(_ path: String) throws(StoreError) {
        do {
            let created = try systemCall {
                open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, newFileMode)
            }
            // The umask may only have taken bits away from 0600; set it exactly anyway.
            _ = try? systemCall { fchmod(created, newFileMode) }
            _ = try? systemCall(retryingOnInterrupt: false) { close(created) }
            return
        } catch {
            guard error.rawValue == EEXIST else {
                // A full disk stays an I/O failure, as SQLite's own SQLITE_FULL is: the journal then uses its reserve.
                throw StoreError(
                    error.rawValue == ENOSPC || error.rawValue == EDQUOT ? .ioFailure : .cannotOpen,
                    "Cannot create the file", path: path,
                    underlying: StoreError.Cause(description: String(cString: strerror(error.rawValue))))
            }
        }
        // A link to nothing: SQLite would create its target wherever it points (in a directory others can write,
        // a link planted there ahead of time). A link to an existing file is the operator's choice and is kept.
        var target = stat()
        do {
            _ = try systemCall { stat(path, &target) }
        } catch {
            if error.rawValue == ENOENT {
                throw StoreError(.cannotOpen, "The path is a symbolic link to a file that does not exist", path: path)
            }
        }
        for file in [path, path + "-wal", path + "-shm"] { narrow(file) }
    }

    /// Takes group write and every bit for others off `path` if it has them (a file of another owner is left as
    /// it is: only its owner or root may change it).
    static func narrow(_ path: String) {
        var status = stat()
        guard (try? systemCall({ stat(path, &status) })) != nil, status.st_mode & 0o170000 == 0o100000 else { return }
        let mode = status.st_mode & 0o7777
        guard mode & ~keptBits != 0 else { return }
        _ = try? systemCall { chmod(path, mode & keptBits) }
    }

    /// The same for an open file.
    static func narrow(_ descriptor: FileDescriptor) {
        var status = stat()
        guard (try? systemCall({ fstat(descriptor.rawValue, &status) })) != nil else { return }
        let mode = status.st_mode & 0o7777
        guard mode & ~keptBits != 0 else { return }
        _ = try? systemCall { fchmod(descriptor.rawValue, mode & keptBits) }
    }
}
