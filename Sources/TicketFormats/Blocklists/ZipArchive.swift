/// A zip file (PKWARE APPNOTE), read just far enough to take one file out of it: the end of central directory
/// record, the central directory, and an entry's local header and data, stored or deflated.
///
/// Minimal on purpose: one disk, no ZIP64, no encryption; an entry is inflated in pieces (with a cap on its size)
/// and its CRC-32 and size are checked against the central directory. Every offset and length is checked
/// against the file before it is used, so a truncated or corrupt file is an error, never a crash.
public struct ZipArchive: Sendable {
    /// One file of the archive, as the central directory describes it.
    public struct Entry: Sendable, Hashable {
        /// The name as stored (bytes read as UTF-8).
        public var name: String
        /// 0 stored, 8 deflated; others are refused when read.
        public var method: UInt16
        /// The general purpose flags (bit 0: encrypted).
        public var flags: UInt16
        /// The CRC-32 of the uncompressed data.
        public var crc32: UInt32
        /// The size of the data as stored.
        public var compressedSize: Int
        /// The size of the data once inflated.
        public var uncompressedSize: Int
        /// Where its local header starts.
        public var localHeaderOffset: Int
    }

    /// The archive's bytes.
    public let bytes: [UInt8]
    /// The files, in central directory order.
    public let entries: [Entry]
    /// Where the central directory starts (no entry's data may run into it).
    private let centralDirectoryOffset: Int

    private static let endSignature: UInt32 = 0x0605_4B50
    private static let centralSignature: UInt32 = 0x0201_4B50
    private static let localSignature: UInt32 = 0x0403_4B50

    /// Reads the central directory.
    ///
    /// - Throws: `malformed` for a file without an end of central directory record (not a zip, or truncated),
    ///   a directory that overruns the file or holds a broken record; `unsupported` for several disks or ZIP64.
    public init(bytes: [UInt8]) throws(FormatError) {
        self.bytes = bytes
        // The end record is 22 bytes plus a comment of up to 65,535: look for its signature from the back, and
        // take the one whose comment ends exactly at the end of the file.
        let minimumEnd = 22
        guard bytes.count >= minimumEnd else {
            throw .malformed("the file is \(bytes.count) bytes long, too short for a zip archive")
        }
        var endOffset: Int?
        var candidate = bytes.count - minimumEnd
        let lowest = max(0, bytes.count - minimumEnd - 65_535)
        while candidate >= lowest {
            if Self.uint32(bytes, candidate) == Self.endSignature,
                candidate + minimumEnd + Int(Self.uint16(bytes, candidate + 20)) == bytes.count
            {
                endOffset = candidate
                break
            }
            candidate -= 1
        }
        guard let end = endOffset else {
            throw .malformed(
                "no zip end of central directory record: the file is not a zip archive, or it is truncated")
        }
        let disk = Self.uint16(bytes, end + 4)
        let directoryDisk = Self.uint16(bytes, end + 6)
        let entriesOnDisk = Int(Self.uint16(bytes, end + 8))
        let entryCount = Int(Self.uint16(bytes, end + 10))
        let directorySize = Int(Self.uint32(bytes, end + 12))
        let directoryOffset = Int(Self.uint32(bytes, end + 16))
        if entryCount == 0xFFFF || directorySize == 0xFFFF_FFFF || directoryOffset == 0xFFFF_FFFF {
            throw .unsupported("the zip archive is in the ZIP64 format, which is not read")
        }
        guard disk == 0, directoryDisk == 0, entriesOnDisk == entryCount else {
            throw .unsupported("the zip archive spans several disks")
        }
        guard directoryOffset <= end, directorySize <= end - directoryOffset else {
            throw .malformed(
                "the zip central directory (\(directorySize) bytes at \(directoryOffset)) overruns the file: "
                    + "the archive is truncated or damaged")
        }
        centralDirectoryOffset = directoryOffset
        var entries: [Entry] = []
        entries.reserveCapacity(entryCount)
        var position = directoryOffset
        let directoryEnd = directoryOffset + directorySize
        for index in 0..<entryCount {
            guard directoryEnd - position >= 46, Self.uint32(bytes, position) == Self.centralSignature else {
                throw .malformed("zip central directory record \(index + 1) at byte \(position) is broken")
            }
            let nameLength = Int(Self.uint16(bytes, position + 28))
            let extraLength = Int(Self.uint16(bytes, position + 30))
            let commentLength = Int(Self.uint16(bytes, position + 32))
            let recordLength = 46 + nameLength + extraLength + commentLength
            guard directoryEnd - position >= recordLength else {
                throw .malformed("zip central directory record \(index + 1) at byte \(position) overruns the directory")
            }
            let compressedSize = Self.uint32(bytes, position + 20)
            let uncompressedSize = Self.uint32(bytes, position + 24)
            let localOffset = Self.uint32(bytes, position + 42)
            if compressedSize == 0xFFFF_FFFF || uncompressedSize == 0xFFFF_FFFF || localOffset == 0xFFFF_FFFF {
                throw .unsupported("zip entry \(index + 1) is in the ZIP64 format, which is not read")
            }
            let nameBytes = bytes[(position + 46)..<(position + 46 + nameLength)]
            entries.append(
                Entry(
                    name: String(decoding: nameBytes, as: UTF8.self), method: Self.uint16(bytes, position + 10),
                    flags: Self.uint16(bytes, position + 8), crc32: Self.uint32(bytes, position + 16),
                    compressedSize: Int(compressedSize), uncompressedSize: Int(uncompressedSize),
                    localHeaderOffset: Int(localOffset)))
            position += recordLength
        }
        self.entries = entries
    }

    /// The one entry named `name`.
    ///
    /// - Throws: `malformed` when there is none, or more than one.
    public func entry(named name: String) throws(FormatError) -> Entry {
        let matches = entries.filter { $0.name == name }
        guard let entry = matches.first else {
            let names = entries.prefix(5).map { "\"\($0.name)\"" }.joined(separator: ", ")
            throw .malformed(
                "the zip archive holds no \(name)" + (entries.isEmpty ? " (it is empty)" : " (it holds \(names))"))
        }
        guard matches.count == 1 else { throw .malformed("the zip archive holds \(name) \(matches.count) times") }
        return entry
    }

    /// Reads `entry`'s data, inflated, in pieces handed to `chunk`; then checks its size and CRC-32.
    ///
    /// - Throws: `malformed` for a local header that does not fit the central directory, data that overruns the
    ///   file, a broken deflate stream, a size or CRC-32 that does not match, or data larger than `limit`;
    ///   `unsupported` for an encrypted entry or a method other than stored (0) and deflated (8).
    public func read(
        _ entry: Entry, limit: Int, chunk: (UnsafeBufferPointer<UInt8>) throws(FormatError) -> Void
    ) throws(FormatError) {
        let name = entry.name
        guard entry.flags & 1 == 0 else { throw .unsupported("zip entry \(name) is encrypted") }
        guard entry.method == 0 || entry.method == 8 else {
            throw .unsupported("zip entry \(name) is compressed with method \(entry.method) (only 0 and 8 are read)")
        }
        guard entry.uncompressedSize <= limit else {
            throw .malformed(
                "zip entry \(name) is \(entry.uncompressedSize) bytes, more than the limit of \(limit) bytes")
        }
        let header = entry.localHeaderOffset
        guard header <= centralDirectoryOffset - 30, Self.uint32(bytes, header) == Self.localSignature else {
            throw .malformed("the local header of zip entry \(name) (at byte \(header)) is missing or broken")
        }
        let nameLength = Int(Self.uint16(bytes, header + 26))
        let extraLength = Int(Self.uint16(bytes, header + 28))
        let dataStart = header + 30 + nameLength + extraLength
        guard dataStart <= centralDirectoryOffset,
            entry.compressedSize <= centralDirectoryOffset - dataStart
        else {
            throw .malformed("the data of zip entry \(name) overruns the archive: it is truncated or damaged")
        }
        guard Self.uint16(bytes, header + 8) == entry.method,
            bytes[(header + 30)..<(header + 30 + nameLength)].elementsEqual(name.utf8)
        else {
            throw .malformed("the local header of zip entry \(name) does not match the central directory")
        }
        var crc: UInt32 = 0
        var produced = 0
        try bytes.withUnsafeBufferPointer { (all) throws(FormatError) in
            let data = UnsafeBufferPointer(rebasing: all[dataStart..<(dataStart + entry.compressedSize)])
            if entry.method == 0 {
                guard entry.compressedSize == entry.uncompressedSize else {
                    throw .malformed(
                        "stored zip entry \(name) states \(entry.compressedSize) bytes stored but "
                            + "\(entry.uncompressedSize) bytes of data")
                }
                // Handed on in 64 KiB pieces, as an inflated entry is.
                var start = 0
                while start < data.count {
                    let piece = UnsafeBufferPointer(rebasing: data[start..<min(data.count, start + 65_536)])
                    crc = Zlib.crc32(piece, continuing: crc)
                    try chunk(piece)
                    start += piece.count
                }
                produced = data.count
            } else {
                produced = try Zlib.inflateRaw(data, limit: limit) { (piece) throws(FormatError) in
                    crc = Zlib.crc32(piece, continuing: crc)
                    try chunk(piece)
                }
            }
        }
        guard produced == entry.uncompressedSize else {
            throw .malformed(
                "zip entry \(name) inflates to \(produced) bytes, but the archive states \(entry.uncompressedSize)")
        }
        guard crc == entry.crc32 else {
            throw .malformed(
                "zip entry \(name) fails its CRC-32 check (\(hex(crc)), the archive states \(hex(entry.crc32))): "
                    + "the archive is damaged")
        }
    }

    private func hex(_ value: UInt32) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }

    private static func uint16(_ bytes: [UInt8], _ offset: Int) -> UInt16 {
        UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8
    }

    private static func uint32(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
        UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2]) << 16
            | UInt32(bytes[offset + 3]) << 24
    }
}
