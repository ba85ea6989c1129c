import Foundation

/// The version of a DOSIPAS header, named by its `format` string.
public enum DOSIPASHeaderVersion: String, Sendable, Hashable, CaseIterable {
    /// `U1`: header v1.0.0.
    case u1 = "U1"
    /// `U2`: header v2.0.1 (adds the end of validity and the validity duration of the dynamic barcode).
    case u2 = "U2"

    /// The schema of `Level1DataType` in this version (U1 and U2 differ in their presence bitmaps).
    var level1Schema: PERType {
        switch self {
        case .u1: DOSIPASSchema.level1DataV1
        case .u2: DOSIPASSchema.level1DataV2
        }
    }
}

/// What a `DataType` entry holds, read from its `dataFormat`.
public enum DOSIPASDataFormat: Sendable, Hashable, CustomStringConvertible {
    /// `FCB1`/`FCB13`, `FCB2`, `FCB3`: FCB rail ticket data (`UicRailTicketData`).
    case fcb(FCBVersion)
    /// `FDC1`: UIC dynamic content (`UicDynamicContentData` v1).
    case fdc1
    /// `_RRRR.ID1`: Intercode 6 dynamic data of company RRRR.
    case intercodeDynamic(company: String)
    /// Any other format (national `+CC…`, company `_RRRR…`, specific `*…`, reserved), as written.
    case other(String)

    /// Reads a `dataFormat` string.
    public init(_ text: String) {
        if let version = FCBVersion(dosipasDataFormat: text) {
            self = .fcb(version)
        } else if text == "FDC1" {
            self = .fdc1
        } else if text.hasPrefix("_"), text.hasSuffix(".ID1"), text.utf8.count > 5 {
            self = .intercodeDynamic(company: String(text.dropFirst().dropLast(4)))
        } else {
            self = .other(text)
        }
    }

    /// The FCB version of an FCB block, `nil` for any other.
    public var fcbVersion: FCBVersion? {
        if case .fcb(let version) = self { return version }
        return nil
    }

    /// The `dataFormat` string.
    public var description: String {
        switch self {
        case .fcb(.v1_3): "FCB1"
        case .fcb(.v2): "FCB2"
        case .fcb(.v3): "FCB3"
        case .fdc1: "FDC1"
        case .intercodeDynamic(let company): "_\(company).ID1"
        case .other(let text): text
        }
    }
}

/// A `DataType` entry: a format and opaque octets (decoded on demand by their format's reader).
public struct DOSIPASDataBlock: Sendable, Hashable {
    /// `dataFormat` as written.
    public var formatText: String
    /// `data`.
    public var data: [UInt8]

    /// What the entry holds.
    public var format: DOSIPASDataFormat { DOSIPASDataFormat(formatText) }

    /// An entry, e.g. `DOSIPASDataBlock(formatText: "FCB3", data: bytes)`.
    public init(formatText: String, data: [UInt8]) {
        self.formatText = formatText
        self.data = data
    }

    init(_ record: PERRecord) {
        let fields = Self.fields.sequence === record.type ? Self.fields : DOSIPASDataTypeFields(record.type)
        formatText = record[position: fields.dataFormat]?.text ?? ""
        data = record[position: fields.data]?.octets ?? []
    }

    /// The positions in `DataType`, resolved once: every block of every barcode is read there.
    private static let fields = DOSIPASDataTypeFields(DOSIPASSchema.dataType.recordSequence!)
}

/// Where `DOSIPASDataBlock` reads `DataType`.
private struct DOSIPASDataTypeFields: Sendable {
    let sequence: PERSequence
    let dataFormat: Int?
    let data: Int?

    init(_ sequence: PERSequence) {
        self.sequence = sequence
        dataFormat = sequence.index(of: "dataFormat")
        data = sequence.index(of: "data")
    }
}

/// `Level1DataType`: who signs level 1 with which key, the signed data, and the level-2 key it vouches for.
public struct DOSIPASLevel1: Sendable {
    /// `securityProviderNum` (a RICS code) or `securityProviderIA5`: whose key list entry signs level 1.
    public var securityProvider: FCBCode?
    /// `keyId`: the key's id in the security provider's key list entries (absent reads as 0).
    public var keyID: Int?
    /// `dataSequence`: the signed content (FCB rail ticket data and any other blocks), in order.
    public var dataSequence: [DOSIPASDataBlock]
    /// `level1KeyAlg`.
    public var level1KeyAlgorithm: DOSIPASKeyAlgorithm?
    /// `level2KeyAlg`.
    public var level2KeyAlgorithm: DOSIPASKeyAlgorithm?
    /// `level1SigningAlg`; absent when the key list entry names the algorithm.
    public var level1SigningAlgorithm: DOSIPASSigningAlgorithm?
    /// `level2SigningAlg`.
    public var level2SigningAlgorithm: DOSIPASSigningAlgorithm?
    /// `level2PublicKey`: the key (made on the phone) that signs level 2, as a SEC1 point or a DER
    /// SubjectPublicKeyInfo.
    public var level2PublicKey: [UInt8]?
    /// `endOfValidityYear`/`Day`/`Time` (U2, UTC): after this the barcode must be regenerated.
    public var endOfValidity: Date?
    /// `validityDuration` (U2): how many seconds after its dynamic time stamp the barcode may be shown.
    public var validityDuration: Int?

    init(_ record: PERRecord) {
        let fields = DOSIPASLevel1Fields.of(record.type)
        securityProvider = FCBCode(record, number: fields.securityProviderNum, text: fields.securityProviderIA5)
        keyID = record[position: fields.keyId]?.integer
        var blocks: [DOSIPASDataBlock] = []
        for item in record[position: fields.dataSequence]?.items ?? [] {
            if let block = item.record { blocks.append(DOSIPASDataBlock(block)) }
        }
        dataSequence = blocks
        // Named from the arcs: writing each identifier out in dotted form to match it cost several allocations.
        level1KeyAlgorithm = Self.arcs(record[position: fields.level1KeyAlg]).map(DOSIPASKeyAlgorithm.init(arcs:))
        level2KeyAlgorithm = Self.arcs(record[position: fields.level2KeyAlg]).map(DOSIPASKeyAlgorithm.init(arcs:))
        level1SigningAlgorithm = Self.arcs(record[position: fields.level1SigningAlg])
            .map(DOSIPASSigningAlgorithm.init(arcs:))
        level2SigningAlgorithm = Self.arcs(record[position: fields.level2SigningAlg])
            .map(DOSIPASSigningAlgorithm.init(arcs:))
        level2PublicKey = record[position: fields.level2PublicKey]?.octets
        if let year = record[position: fields.endOfValidityYear]?.integer,
            let day = record[position: fields.endOfValidityDay]?.integer
        {
            // The module asks for all three; a missing time is read as the end of that day.
            let minute = record[position: fields.endOfValidityTime]?.integer ?? 1_439
            let epochDay = FCBDay(year: year, dayOfYear: day).epochDay
            endOfValidity = Date(timeIntervalSince1970: TimeInterval(epochDay &* 86_400 &+ minute &* 60))
        }
        validityDuration = record[position: fields.validityDuration]?.integer
    }

    /// The arcs of an OBJECT IDENTIFIER value.
    private static func arcs(_ value: PERValue?) -> [Int]? {
        if case .objectIdentifier(let arcs)? = value { return arcs }
        return nil
    }

    /// The first FCB block of the data sequence, with its version.
    public var railTicketBlock: (version: FCBVersion, block: DOSIPASDataBlock)? {
        for block in dataSequence {
            if case .fcb(let version) = block.format { return (version, block) }
        }
        return nil
    }

    /// Whether level 1 names a level-2 key or algorithm: then a level-2 signature must be there.
    public var namesLevel2Key: Bool {
        level2PublicKey != nil || level2SigningAlgorithm != nil
    }
}

/// A DOSIPAS barcode (UIC 918.9 `UicBarcodeHeader`, formats `U1` and `U2`), taken apart with the exact bytes
/// each of its two signatures covers.
///
/// ```
/// UicBarcodeHeader ::= SEQUENCE { format IA5String, level2SignedData Level2DataType,
///                                 level2Signature OCTET STRING OPTIONAL }
/// Level2DataType   ::= SEQUENCE { level1Data Level1DataType, level1Signature OCTET STRING OPTIONAL,
///                                 level2Data DataType OPTIONAL }
/// ```
///
/// Signed bytes are cut from the barcode's own bits, never re-encoded (a non-canonical encoder's bits would
/// not survive a round trip): level 1 signs the bits of `level1Data`, level 2 the bits of `level2SignedData`
/// (level-1 data, level-1 signature and level-2 data), each moved to start at bit 0 and padded with zero bits
/// to whole octets. The padding is never taken from the bits that follow in the barcode.
public struct DOSIPASBarcode: Sendable {
    /// `format`: which header module the barcode follows.
    public var headerVersion: DOSIPASHeaderVersion
    /// `level1Data`.
    public var level1: DOSIPASLevel1
    /// `level1Signature`: made with the security provider's key from the UIC key list; `nil` when the barcode
    /// is unsigned.
    public var level1Signature: [UInt8]?
    /// `level2Data`: dynamic content (`FDC1`, Intercode `_RRRR.ID1`, …) signed at display time.
    public var level2Data: DOSIPASDataBlock?
    /// `level2Signature`: made with `level1.level2PublicKey`; outside both signatures, so it can be stripped.
    public var level2Signature: [UInt8]?
    /// The bits of `level1Data` in the barcode (bit 0 = the most significant bit of the first byte).
    public var level1SignedBits: Range<Int>
    /// The bits of `level2SignedData` in the barcode.
    public var level2SignedBits: Range<Int>
    /// How many bits the header's fields take; the rest of the last octet (fewer than 8 bits) is padding,
    /// covered by no signature.
    public var bitCount: Int
    /// What the level-1 signature covers: `level1SignedBits`, realigned and zero-padded.
    public var level1SignedBytes: [UInt8]
    /// What the level-2 signature covers: `level2SignedBits`, realigned and zero-padded.
    public var level2SignedBytes: [UInt8]

    /// Whether `payload` starts like a DOSIPAS barcode: byte 0 is `0x81` or `0x01` (the level-2 signature's
    /// presence bit, then the first 7 bits of the format's length 2), byte 1 is `0x55` (the last length bit,
    /// then `U`), and byte 2 holds the digit of `U1`…`U3` and the level-1 signature's presence bit
    /// (`0x62`–`0x67`).
    ///
    /// No other format farecheck reads can start so: FC1 starts with `FC1:` (0x46), `0xD2`/`0x84` (COSE) or
    /// `0x78` (zlib); UIC 918.3 with `#UT` (0x23); text prefixes are printable ASCII, and 0x01/0x81 are not.
    public static func isBarcode(_ payload: [UInt8]) -> Bool {
        guard payload.count >= 3 else { return false }
        return (payload[0] == 0x81 || payload[0] == 0x01) && payload[1] == 0x55 && (0x62...0x67).contains(payload[2])
    }

    /// Takes a barcode apart.
    ///
    /// - Throws: `unsupported` for a header format other than `U1` and `U2` (the draft `U3`); `malformed`
    ///   naming the bit offset and field when the bits break the header's schema, run out, or are followed by
    ///   whole octets that belong to nothing.
    public init(decoding bytes: [UInt8]) throws(FormatError) {
        // Messages are built only on failure: each interpolated subject was an allocation per barcode.
        let subject = "the DOSIPAS barcode"
        var reader = PERBitReader(bytes)
        let hasLevel2Signature = try reader.readBits(1, subject: subject) == 1
        let formatStart = reader.position
        guard let format = try reader.decode(.ia5String(nil), subject: subject).text else {
            throw .malformed("\(subject) has no format string at bit \(formatStart)")
        }
        guard let version = DOSIPASHeaderVersion(rawValue: format) else {
            throw .unsupported(
                "the DOSIPAS header format \"\(format)\" is not supported (farecheck reads U1 and U2)")
        }
        let level2Start = reader.position
        let level2Bitmap = try reader.readBits(2, subject: "\(subject)'s Level2DataType")
        let level1Start = reader.position
        guard
            let level1Record = try reader.decode(version.level1Schema, subject: "\(subject)'s level1Data").record
        else {
            throw .malformed("\(subject)'s level1Data at bit \(level1Start) is not a sequence")
        }
        let level1End = reader.position
        var level1Signature: [UInt8]?
        if level2Bitmap & 0b10 != 0 {
            level1Signature = try reader.decode(.octetString(nil), subject: "\(subject)'s level1Signature").octets
        }
        var level2Data: DOSIPASDataBlock?
        if level2Bitmap & 0b01 != 0 {
            let value = try reader.decode(DOSIPASSchema.dataType, subject: "\(subject)'s level2Data")
            level2Data = value.record.map(DOSIPASDataBlock.init)
        }
        let level2End = reader.position
        var level2Signature: [UInt8]?
        if hasLevel2Signature {
            level2Signature = try reader.decode(.octetString(nil), subject: "\(subject)'s level2Signature").octets
        }
        guard reader.remainingBits < 8 else {
            throw .malformed(
                "\(subject) ends at bit \(reader.position) but \(reader.remainingBits / 8) more octets follow")
        }
        headerVersion = version
        bitCount = reader.position
        level1 = DOSIPASLevel1(level1Record)
        self.level1Signature = level1Signature
        self.level2Data = level2Data
        self.level2Signature = level2Signature
        level1SignedBits = level1Start..<level1End
        level2SignedBits = level2Start..<level2End
        level1SignedBytes = Self.realigned(bytes, level1SignedBits)
        level2SignedBytes = Self.realigned(bytes, level2SignedBits)
    }

    /// The bits `range` of `bytes`, moved to start at bit 0 and padded with zero bits to whole octets.
    ///
    /// - Precondition: `range` lies within `bytes` (the decoder read those bits).
    static func realigned(_ bytes: [UInt8], _ range: Range<Int>) -> [UInt8] {
        let count = range.count
        let octetCount = (count + 7) / 8
        guard count > 0 else { return [] }
        let shift = range.lowerBound & 7
        let first = range.lowerBound >> 3
        precondition(
            range.lowerBound >= 0 && first + octetCount <= bytes.count, "bits \(range) of \(bytes.count) octets")
        // Through buffers, checked once above rather than at every octet: this copies most of the barcode twice.
        return [UInt8](unsafeUninitializedCapacity: octetCount) { result, initialized in
            bytes.withUnsafeBufferPointer { bytes in
                let end = bytes.count
                for index in 0..<octetCount {
                    let source = first &+ index
                    var byte = bytes[source] << shift
                    if shift != 0, source &+ 1 < end { byte |= bytes[source &+ 1] >> (8 &- shift) }
                    result[index] = byte
                }
            }
            // Clear the bits past the range: they belong to the next field, and the padding is zero.
            let tail = count & 7
            if tail != 0 { result[octetCount - 1] &= 0xFF << (8 - tail) }
            initialized = octetCount
        }
    }
}

/// Where `DOSIPASLevel1` reads `Level1DataType`, resolved once per header version: every barcode's level-1 data
/// is read there, and a name lookup per field cost a hash and a string comparison each time.
private struct DOSIPASLevel1Fields: Sendable {
    let sequence: PERSequence
    let securityProviderNum: Int?
    let securityProviderIA5: Int?
    let keyId: Int?
    let dataSequence: Int?
    let level1KeyAlg: Int?
    let level2KeyAlg: Int?
    let level1SigningAlg: Int?
    let level2SigningAlg: Int?
    let level2PublicKey: Int?
    let endOfValidityYear: Int?
    let endOfValidityDay: Int?
    let endOfValidityTime: Int?
    let validityDuration: Int?

    init(_ sequence: PERSequence) {
        self.sequence = sequence
        securityProviderNum = sequence.index(of: "securityProviderNum")
        securityProviderIA5 = sequence.index(of: "securityProviderIA5")
        keyId = sequence.index(of: "keyId")
        dataSequence = sequence.index(of: "dataSequence")
        level1KeyAlg = sequence.index(of: "level1KeyAlg")
        level2KeyAlg = sequence.index(of: "level2KeyAlg")
        level1SigningAlg = sequence.index(of: "level1SigningAlg")
        level2SigningAlg = sequence.index(of: "level2SigningAlg")
        level2PublicKey = sequence.index(of: "level2PublicKey")
        endOfValidityYear = sequence.index(of: "endOfValidityYear")
        endOfValidityDay = sequence.index(of: "endOfValidityDay")
        endOfValidityTime = sequence.index(of: "endOfValidityTime")
        validityDuration = sequence.index(of: "validityDuration")
    }

    private static let v1 = DOSIPASLevel1Fields(DOSIPASSchema.level1DataV1.recordSequence!)
    private static let v2 = DOSIPASLevel1Fields(DOSIPASSchema.level1DataV2.recordSequence!)

    /// The positions in `sequence`: those resolved for U1 or U2 when it is one of them, else resolved now.
    static func of(_ sequence: PERSequence) -> DOSIPASLevel1Fields {
        if sequence === v2.sequence { return v2 }
        if sequence === v1.sequence { return v1 }
        return DOSIPASLevel1Fields(sequence)
    }
}
