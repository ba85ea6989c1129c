import Foundation
import Synchronization
import SystemCalls
import SystemPackage

/// Space set aside on disk, ahead of need, for inspections the journal cannot take while the disk is full.
///
/// A file of fixed size written in full (zeros) when the journal is opened, so that its blocks belong to it:
/// writing a record later overwrites blocks the file already has and needs no free space, also on a full disk.
/// Records are appended and synced before `write` returns, so a verdict kept here survives a crash or a kill;
/// the journal moves them into its database when space returns and then clears the file.
///
/// Each record is framed: magic `FCJR`, the body's length and CRC-32 (both little-endian `UInt32`), the body.
/// Reading stops at the first frame that is incomplete or whose checksum fails: that is a write cut short by a
/// crash, whose verdict was never shown (it is shown only after the sync returns).
///
/// One process owns the reserve at a time (an exclusive `flock`): the daemon, or a command run while no daemon
/// is. Another process that opens the store (`farecheck sync` beside a running daemon) gets no reserve, so it
/// never drains or clears records the owner is still writing.
final class JournalReserve: Sendable {
    /// The reserve file.
    let path: String
    /// The size it is made with, and grown back to after space was given back (`release`).
    let targetCapacity: Int
    /// Its size in bytes now.
    var capacity: Int { state.withLock { $0.capacity } }
    private struct State {
        var descriptor: FileDescriptor
        var capacity: Int
        /// Where the next frame goes: the end of the last valid frame.
        var end: Int
        /// How many frames the file holds.
        var count: Int
        /// Whether `close` ran.
        var closed = false
    }
    private let state: Mutex<State>

    private static let magic: [UInt8] = Array("FCJR".utf8)
    private static let frameHeaderLength = 12

    /// Opens the reserve at `path`, creating it with `capacity` bytes of zeros when missing or shorter; a new
    /// file takes at most a quarter of the space free on its filesystem (at least 64 KiB).
    ///
    /// - Throws: `Errno` when the file cannot be opened or filled (then the journal runs without a reserve).
    init(path: String, capacity requested: Int) throws {
        self.path = path
        let descriptor = try FileDescriptor.open(
            FilePath(path), .readWrite, options: [.create, .closeOnExec, .noFollow], permissions: [.ownerReadWrite])
        // A reserve made by an older farecheck may be readable by others: it holds inspections too.
        PrivateFiles.narrow(descriptor)
        do {
            _ = try systemCall { flock(descriptor.rawValue, LOCK_EX | LOCK_NB) }
            let size = Int(try descriptor.seek(offset: 0, from: .end))
            var capacity = requested
            if size < requested {
                var stats = statvfs()
                if (try? systemCall({ fstatvfs(descriptor.rawValue, &stats) })) != nil {
                    let free = Int(stats.f_bavail) * Int(stats.f_frsize)
                    capacity = max(size, min(requested, max(64 << 10, free / 4)))
                }
                try Self.grow(descriptor, from: size, to: capacity)
            } else {
                capacity = size
            }
            targetCapacity = max(requested, capacity)
            let (end, count) = try Self.scan(descriptor, capacity: capacity)
            state = Mutex(State(descriptor: descriptor, capacity: capacity, end: end, count: count))
        } catch {
            try? descriptor.close()
            throw error
        }
    }

    /// Extends the file with zeros (really allocated: no sparse extension), or cuts it back to `size` when the
    /// disk has no room for all of them, so that a failed attempt does not keep the space it took.
    private static func grow(_ descriptor: FileDescriptor, from size: Int, to capacity: Int) throws {
        guard capacity > size else { return }
        let zeros = [UInt8](repeating: 0, count: capacity - size)
        do {
            _ = try zeros.withUnsafeBytes { try descriptor.writeAll(toAbsoluteOffset: Int64(size), $0) }
            try sync(descriptor)
        } catch {
            _ = try? systemCall { ftruncate(descriptor.rawValue, off_t(size)) }
            throw error
        }
    }

    /// Gives up to `bytes` of the unused end of the reserve back to the filesystem: on a full disk, the room
    /// SQLite needs to open the store again after a restart. Returns how many bytes were given back.
    func release(_ bytes: Int) -> Int {
        state.withLock { state in
            let released = min(bytes, state.capacity - state.end)
            guard released > 0,
                (try? systemCall({ ftruncate(state.descriptor.rawValue, off_t(state.capacity - released)) })) != nil
            else {
                return 0
            }
            state.capacity -= released
            return released
        }
    }

    /// Grows the reserve back to its target size after `release`, when the disk has room again.
    func restore() {
        state.withLock { state in
            guard state.capacity < targetCapacity,
                (try? Self.grow(state.descriptor, from: state.capacity, to: targetCapacity)) != nil
            else { return }
            state.capacity = targetCapacity
        }
    }

    deinit { close() }

    /// Closes the file, which releases it for another process (a daemon started after a command).
    func close() {
        state.withLock { state in
            guard !state.closed else { return }
            state.closed = true
            try? state.descriptor.close()
        }
    }

    /// How many records wait in the reserve.
    var count: Int { state.withLock { $0.count } }

    /// Appends `body` and syncs it to disk; `false` when the reserve has no room left for it.
    ///
    /// - Throws: `Errno` when the write or the sync fails.
    func write(_ body: [UInt8]) throws -> Bool {
        try state.withLock { state in
            let frameLength = Self.frameHeaderLength + body.count
            guard !state.closed, state.end + frameLength <= state.capacity else { return false }
            var frame = Self.magic
            frame.reserveCapacity(frameLength)
            Self.appendUInt32(UInt32(body.count), to: &frame)
            Self.appendUInt32(CRC32.checksum(body), to: &frame)
            frame += body
            _ = try frame.withUnsafeBytes { try state.descriptor.writeAll(toAbsoluteOffset: Int64(state.end), $0) }
            try Self.sync(state.descriptor)
            state.end += frameLength
            state.count += 1
            return true
        }
    }

    /// Every record in the reserve, oldest first.
    func records() throws -> [[UInt8]] {
        try state.withLock { state in
            guard state.end > 0 else { return [] }
            var bytes = [UInt8](repeating: 0, count: state.end)
            let read = try bytes.withUnsafeMutableBytes {
                try state.descriptor.read(fromAbsoluteOffset: 0, into: $0)
            }
            return Self.frames(in: bytes[..<read]).bodies
        }
    }

    /// Empties the reserve (zeros over what was written, synced): its records are in the journal now.
    func clear() throws {
        try state.withLock { state in
            guard state.end > 0 else { return }
            let zeros = [UInt8](repeating: 0, count: state.end)
            _ = try zeros.withUnsafeBytes { try state.descriptor.writeAll(toAbsoluteOffset: 0, $0) }
            try Self.sync(state.descriptor)
            state.end = 0
            state.count = 0
        }
    }

    private static func scan(_ descriptor: FileDescriptor, capacity: Int) throws -> (end: Int, count: Int) {
        // Read only as far as the frames go, in growing steps: the reserve is empty nearly always, and reading all of
        // it (4 MiB, into 4 MiB of new memory) was a fifth of a `farecheck verify`'s start-up. The frames found are
        // those of the whole file, since a frame is judged by its own bytes only.
        var bytes: [UInt8] = []
        var step = 64 << 10
        while true {
            let wanted = min(capacity, bytes.count + step) - bytes.count
            let offset = Int64(bytes.count)
            let chunk = try [UInt8](unsafeUninitializedCapacity: wanted) { buffer, count in
                count = try descriptor.read(fromAbsoluteOffset: offset, into: UnsafeMutableRawBufferPointer(buffer))
            }
            bytes += chunk
            let frames = frames(in: bytes[...])
            if chunk.count < wanted || bytes.count >= capacity || !endsInsideFrame(bytes, at: frames.end) {
                return (frames.end, frames.bodies.count)
            }
            step *= 4
        }
    }

    /// Whether the bytes read stop inside the frame (or the frame header) at `offset`, so that reading on decides it.
    private static func endsInsideFrame(_ bytes: [UInt8], at offset: Int) -> Bool {
        let rest = bytes.count - offset
        guard rest >= frameHeaderLength else { return true }
        guard bytes[offset..<(offset + 4)].elementsEqual(magic) else { return false }
        return Int(readUInt32(bytes[...], at: offset + 4)) > rest - frameHeaderLength
    }

    /// The valid frames at the start of `bytes`, and where they end.
    static func frames(in bytes: ArraySlice<UInt8>) -> (bodies: [[UInt8]], end: Int) {
        var bodies: [[UInt8]] = []
        var offset = bytes.startIndex
        while bytes.endIndex - offset >= frameHeaderLength, bytes[offset..<(offset + 4)].elementsEqual(magic) {
            let length = Int(readUInt32(bytes, at: offset + 4))
            let checksum = readUInt32(bytes, at: offset + 8)
            let start = offset + frameHeaderLength
            guard length <= bytes.endIndex - start else { break }
            let body = Array(bytes[start..<(start + length)])
            guard CRC32.checksum(body) == checksum else { break }
            bodies.append(body)
            offset = start + length
        }
        return (bodies, offset - bytes.startIndex)
    }

    private static func sync(_ descriptor: FileDescriptor) throws {
        // fdatasync: the data and the size, which is all a reader needs (the file never grows after creation).
        _ = try systemCall { fdatasync(descriptor.rawValue) }
    }

    private static func appendUInt32(_ value: UInt32, to bytes: inout [UInt8]) {
        for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> shift)) }
    }

    private static func readUInt32(_ bytes: ArraySlice<UInt8>, at offset: Int) -> UInt32 {
        (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[offset + $1]) << (8 * $1) }
    }
}

/// CRC-32 (IEEE 802.3, reflected, polynomial 0xEDB88320), as zlib computes it.
enum CRC32 {
    private static let table: [UInt32] = (0..<256).map { index in
        (0..<8).reduce(UInt32(index)) { crc, _ in crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
    }

    static func checksum(_ bytes: [UInt8]) -> UInt32 {
        ~bytes.reduce(~UInt32(0)) { crc, byte in table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
    }
}
