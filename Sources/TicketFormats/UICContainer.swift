import FareCore

/// How the signature of a UIC 918.3 container is encoded.
public enum UICSignatureForm: Sendable, Hashable, CustomStringConvertible {
    /// An ASN.1 DER `SEQUENCE { r INTEGER, s INTEGER }` (version 1, and some version 2 tickets).
    case der
    /// `r ‖ s`, each 32 bytes big-endian (version 2).
    case raw

    /// `DER` or `raw r‖s`, as the inspector shows it.
    public var description: String {
        switch self {
        case .der: "DER"
        case .raw: "raw r‖s"
        }
    }
}

/// One record of the inflated data of a UIC 918.3 container: `U_HEAD`, `U_TLAY`, `U_FLEX`, `0080BL`, ….
///
/// Records are kept whether farecheck understands them or not; decoding their bodies is a separate
/// step (`UICHead`, `UICLayout`, `UIC0080BL`).
public struct UICRecord: Sendable, Hashable {
    /// The 6-character record id, e.g. `U_HEAD` or `0080BL`.
    public var id: String
    /// The 2-character record version, e.g. `01`.
    public var version: String
    /// The offset of the record's header in the inflated data.
    public var offset: Int
    /// The record's content after its 12-byte header.
    public var body: [UInt8]
    /// How the record's header departs from the standard (a length padded with spaces), as read from a container.
    public var quirks: [IssuerQuirk] = []

    /// The size of the record's header: id (6), version (2) and length (4).
    public static let headerLength = 12

    /// A record; `offset` only matters for records read from a container (it locates errors).
    public init(id: String, version: String, body: [UInt8], offset: Int = 0) {
        self.id = id
        self.version = version
        self.offset = offset
        self.body = body
    }

    /// The record's length as its header states it: header plus body.
    public var length: Int { Self.headerLength + body.count }

    /// `id version length`, e.g. `U_HEAD 01 53`: how the inspector lists records.
    public var summary: String { "\(id) \(version) \(length)" }

    /// The record as it stands in the inflated data: header, then body.
    ///
    /// - Precondition: `id` has 6 and `version` 2 ASCII characters, and the record is shorter than
    ///   10 000 bytes (the length field has four digits).
    public func encoded() -> [UInt8] {
        precondition(id.utf8.count == 6 && id.utf8.allSatisfy { $0 < 0x80 }, "a UIC record id has 6 ASCII characters")
        precondition(version.utf8.count == 2, "a UIC record version has 2 characters")
        return Array(id.utf8) + Array(version.utf8) + uicDigits(length, width: 4) + body
    }

    /// Splits inflated container data into records.
    ///
    /// Every record must have a complete header whose length field is four digits, at least 12, and
    /// within the data; otherwise `malformed` names the offset. Unknown records are kept. A length padded with
    /// spaces instead of zeros (`"  53"`) is read as its digits and named in the record's `quirks`.
    ///
    /// When that split fails, a `U_TLAY` record's own length is read as a count of UTF-8 characters instead of
    /// bytes, as DSB's systems write it (`København H` in the layout: the record says 600 and spans 601 bytes); that
    /// reading is taken only when it splits the whole data exactly and the layout's fields then read exactly too,
    /// and it is named in the record's `quirks` (`length-in-characters`).
    public static func records(in data: [UInt8]) throws(FormatError) -> [UICRecord] {
        do {
            return try split(data, layoutLengthInCharacters: false)
        } catch {
            guard let counted = try? split(data, layoutLengthInCharacters: true) else { throw error }
            return counted
        }
    }

    /// The split of `records(in:)`, with `U_TLAY` lengths counted in bytes or, where that differs, in characters.
    private static func split(_ data: [UInt8], layoutLengthInCharacters: Bool) throws(FormatError) -> [UICRecord] {
        var records: [UICRecord] = []
        var countedInCharacters = false
        var offset = 0
        while offset < data.count {
            let left = data.count - offset
            guard left >= headerLength else {
                throw .malformed(
                    "the record header at byte \(offset) of the inflated data is truncated: "
                        + "\(left) bytes are left of the 12 it needs"
                )
            }
            let idBytes = data[offset..<(offset + 6)]
            let versionBytes = data[(offset + 6)..<(offset + 8)]
            let lengthBytes = data[(offset + 8)..<(offset + 12)]
            guard UICFieldCursor.isPrintableASCII(idBytes), UICFieldCursor.isPrintableASCII(versionBytes) else {
                throw .malformed(
                    "the record header at byte \(offset) of the inflated data has no text id and version: "
                        + UICFieldCursor.describe(data[offset..<(offset + 8)])
                )
            }
            let id = String(decoding: idBytes, as: UTF8.self)
            var quirks: [IssuerQuirk] = []
            let length: Int
            if let digits = UICFieldCursor.asciiNumber(lengthBytes) {
                length = digits
            } else if let padded = UICFieldCursor.spacePaddedNumber(lengthBytes) {
                length = padded
                quirks.append(
                    IssuerQuirk(
                        .spacePaddedNumber(written: String(decoding: lengthBytes, as: UTF8.self)), record: id,
                        offset: offset + 8, field: "length"))
            } else {
                throw .malformed(
                    "the length of record \(id) at byte \(offset + 8) of the inflated data is "
                        + "\(UICFieldCursor.describe(lengthBytes)), not 4 digits"
                )
            }
            guard length >= headerLength else {
                throw .malformed(
                    "record \(id) at byte \(offset) of the inflated data states a length of \(length), "
                        + "less than its own 12-byte header"
                )
            }
            var span = length
            if layoutLengthInCharacters, id == UICLayout.recordID {
                // The body's bytes that `length - 12` characters take, when they are UTF-8.
                var cursor = UICFieldCursor(
                    Array(data[(offset + headerLength)...]), base: offset + headerLength, subject: "U_TLAY record")
                if let characters = cursor.characters(length - headerLength), characters.count != length - headerLength
                {
                    span = headerLength + characters.count
                    countedInCharacters = true
                    quirks.append(
                        IssuerQuirk(
                            .lengthInCharacters(characters: length, bytes: span), record: id, offset: offset + 8,
                            field: "length"))
                }
            }
            guard span <= left else {
                throw .malformed(
                    "record \(id) at byte \(offset) of the inflated data states a length of \(length), "
                        + "but only \(left) bytes are left"
                )
            }
            var record = UICRecord(
                id: id, version: String(decoding: versionBytes, as: UTF8.self),
                body: Array(data[(offset + headerLength)..<(offset + span)]), offset: offset
            )
            record.quirks = quirks
            if span != length {
                // Taken only when the layout's own fields then read exactly (their lengths counted the same way).
                guard (try? UICLayout(record: record)) != nil else {
                    throw .malformed("the U_TLAY record does not read with its length counted in characters")
                }
            }
            records.append(record)
            offset += span
        }
        if layoutLengthInCharacters, !countedInCharacters {
            throw .malformed("no U_TLAY record is longer counted in characters")
        }
        return records
    }
}

/// A UIC 918.3 static barcode taken apart: header, signature, signed bytes and records.
///
/// Parsing checks the structure only; whether the signature is genuine is the verifier's business. The
/// signature covers `signedData`, the compressed bytes exactly as the barcode carries them.
public struct UICContainer: Sendable, Hashable {
    /// The header version: 1 (50-byte DER signature field) or 2 (64-byte field).
    public var version: Int
    /// The issuer's RICS code exactly as the header writes it, e.g. `1080`.
    public var issuerCode: String
    /// The key id exactly as the header writes it, e.g. `00007` or `TT005`.
    public var keyID: String
    /// The signature: the DER sequence cut to its own length, or the 64 raw bytes.
    public var signature: [UInt8]
    /// How `signature` is encoded.
    public var signatureForm: UICSignatureForm
    /// The size of the signature field in the header: 50 or 64.
    ///
    /// 50 in a version 2 header when the issuer laid the container out like version 1 (see `init`).
    public var signatureFieldLength: Int
    /// The compressed data exactly as carried: what the signature covers. Never re-compress it.
    public var signedData: [UInt8]
    /// The records of the inflated data, in order.
    public var records: [UICRecord]
    /// How the `#UT` header departs from the standard (a data length padded with spaces).
    public var headerQuirks: [IssuerQuirk]

    /// How the container departs from the standard: its header's quirks, then each record header's, in order.
    public var quirks: [IssuerQuirk] { headerQuirks + records.flatMap(\.quirks) }

    /// Takes a container apart.
    ///
    /// Layout: `#UT`, version `01`/`02`, issuer code (4), key id (5), signature field (50 for version 1,
    /// 64 for version 2), the length of the compressed data as 4 ASCII digits, then the zlib stream.
    ///
    /// Decisions where the specification leaves room:
    /// - Bytes after the compressed data are tolerated only if they are all zero (padding that some
    ///   encoders add to fill the barcode; it is not signed and carries nothing). Anything else is
    ///   `malformed`.
    /// - A version 1 field must hold a DER signature followed by zero bytes only.
    /// - A version 2 field is read as DER when it holds a DER sequence of two integers followed by zero
    ///   padding (some issuers do that), otherwise as 64 raw bytes.
    /// - A version 2 header whose container only makes sense with a 50-byte field holding DER (length
    ///   digits at byte 64 and a DER signature at byte 14) is accepted with `signatureFieldLength` 50:
    ///   some issuers lay out version 2 tickets like version 1 (PKP Intercity); named in `quirks`.
    /// - A data length or record length padded with spaces instead of zeros (`" 107"`) is read as its digits
    ///   and named in `quirks` (Connexxion's bus tickets, see docs/issuer-quirks.md).
    ///
    /// - Throws: `malformed`, naming the offset, for anything that breaks the layout (including a
    ///   broken or oversized zlib stream and broken record headers); `unsupported` for a version other
    ///   than 1 and 2.
    public init(parsing bytes: [UInt8], inflateLimit: Int = Zlib.defaultInflateLimit) throws(FormatError) {
        let magic = UIC918_3.magic
        guard bytes.count >= magic.count, bytes.starts(with: magic) else {
            if magic.starts(with: bytes) {
                throw .malformed("the UIC 918.3 header is truncated at byte \(bytes.count), inside the #UT marker")
            }
            throw .malformed(
                "a UIC 918.3 container starts with #UT at byte 0, not \(UICFieldCursor.describe(bytes.prefix(3)))"
            )
        }
        guard bytes.count >= 5 else {
            throw .malformed(
                "the UIC 918.3 header is truncated at byte \(bytes.count), inside the version (bytes 3–4)"
            )
        }
        guard let version = UICFieldCursor.asciiNumber(bytes[3..<5]) else {
            throw .malformed("the version at byte 3 is \(UICFieldCursor.describe(bytes[3..<5])), not 2 digits")
        }
        guard version == 1 || version == 2 else {
            throw .unsupported("UIC 918.3 header version \(version) at byte 3 is not supported (only 01 and 02)")
        }
        guard bytes.count >= 14 else {
            let field = bytes.count < 9 ? "issuer code (bytes 5–8)" : "key id (bytes 9–13)"
            throw .malformed("the UIC 918.3 header is truncated at byte \(bytes.count), inside the \(field)")
        }
        let issuerCode = try Self.headerText(bytes[5..<9], at: 5, field: "issuer code")
        let keyID = try Self.headerText(bytes[9..<14], at: 9, field: "key id")
        self.version = version
        self.issuerCode = issuerCode
        self.keyID = keyID

        var layout: Layout
        if version == 1 {
            layout = try Self.layout(of: bytes, fieldLength: 50, derOnly: true)
        } else {
            do {
                layout = try Self.layout(of: bytes, fieldLength: 64, derOnly: false)
            } catch {
                // A version 1 layout under a version 2 header: only when that reading holds up entirely.
                guard let fallback = try? Self.layout(of: bytes, fieldLength: 50, derOnly: true) else { throw error }
                layout = fallback
                layout.quirks.insert(
                    IssuerQuirk(
                        .version1LayoutUnderVersion2, record: IssuerQuirk.containerHeader, offset: 3, field: "version"),
                    at: 0)
            }
        }
        signature = layout.signature
        signatureForm = layout.form
        signatureFieldLength = layout.fieldLength
        signedData = Array(bytes[layout.dataStart..<(layout.dataStart + layout.dataLength)])
        headerQuirks = layout.quirks

        let inflated: [UInt8]
        do {
            inflated = try Zlib.inflate(signedData, limit: inflateLimit)
        } catch {
            throw FormatError(
                code: error.code,
                message: "the compressed data at byte \(layout.dataStart) does not inflate: \(error.message)")
        }
        records = try UICRecord.records(in: inflated)
    }

    /// The first record with `id`, if any.
    public func record(_ id: String) -> UICRecord? {
        records.first { $0.id == id }
    }

    // MARK: - Layout

    private struct Layout {
        var fieldLength: Int
        var signature: [UInt8]
        var form: UICSignatureForm
        var dataStart: Int
        var dataLength: Int
        var quirks: [IssuerQuirk]
    }

    /// Where the signature and the compressed data are, for a signature field of `fieldLength` bytes.
    private static func layout(of bytes: [UInt8], fieldLength: Int, derOnly: Bool) throws(FormatError) -> Layout {
        let fieldStart = 14
        let lengthStart = fieldStart + fieldLength
        let dataStart = lengthStart + 4
        guard bytes.count >= dataStart else {
            let field = bytes.count < lengthStart ? "signature field (bytes 14–\(lengthStart - 1))" : "data length"
            throw .malformed("the UIC 918.3 header is truncated at byte \(bytes.count), inside the \(field)")
        }
        let lengthDigits = bytes[lengthStart..<dataStart]
        var quirks: [IssuerQuirk] = []
        let dataLength: Int
        if let digits = UICFieldCursor.asciiNumber(lengthDigits) {
            dataLength = digits
        } else if let padded = UICFieldCursor.spacePaddedNumber(lengthDigits) {
            dataLength = padded
            quirks.append(
                IssuerQuirk(
                    .spacePaddedNumber(written: String(decoding: lengthDigits, as: UTF8.self)),
                    record: IssuerQuirk.containerHeader, offset: lengthStart, field: "data length"))
        } else {
            throw .malformed(
                "the data length at byte \(lengthStart) is \(UICFieldCursor.describe(lengthDigits)), not 4 digits"
            )
        }
        guard dataLength <= bytes.count - dataStart else {
            throw .malformed(
                "the data length at byte \(lengthStart) states \(dataLength) bytes, "
                    + "but only \(bytes.count - dataStart) follow the header"
            )
        }
        let dataEnd = dataStart + dataLength
        if let nonZero = bytes[dataEnd...].firstIndex(where: { $0 != 0 }) {
            throw .malformed(
                "\(bytes.count - dataEnd) bytes follow the compressed data, and byte \(nonZero) "
                    + "(0x\([bytes[nonZero]].hexString)) is not zero padding"
            )
        }

        let field = bytes[fieldStart..<lengthStart]
        let signature: [UInt8]
        let form: UICSignatureForm
        if let length = UICSignatureField.derLength(field) {
            signature = Array(field.prefix(length))
            form = .der
        } else {
            guard !derOnly else {
                throw .malformed(
                    "the \(fieldLength)-byte signature field at byte \(fieldStart) \(UICSignatureField.whyNotDER(field))"
                )
            }
            signature = Array(field)
            form = .raw
        }
        return Layout(
            fieldLength: fieldLength, signature: signature, form: form, dataStart: dataStart, dataLength: dataLength,
            quirks: quirks)
    }

    /// A printable ASCII header field.
    private static func headerText(
        _ raw: ArraySlice<UInt8>, at start: Int, field: String
    ) throws(FormatError) -> String {
        guard UICFieldCursor.isPrintableASCII(raw) else {
            throw .malformed("the \(field) at byte \(start) is \(UICFieldCursor.describe(raw)), not text")
        }
        return String(decoding: raw, as: UTF8.self)
    }
}
