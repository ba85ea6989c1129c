import FareCore
import Foundation
import Signatures
import TicketFormats

/// A way of writing a UIC 918.3 ticket that real issuers use and the standard does not allow (see
/// docs/issuer-quirks.md), or a break that no tolerance reads, for building test tickets.
public enum TicketQuirk: String, Sendable, CaseIterable {
    /// The data length in the `#UT` header written with spaces for the leading zero (`" 187"`), as Connexxion's
    /// bus tickets do.
    case paddedDataLength = "padded-data-length"
    /// Every record length written with spaces for leading zeros (`"  53"`), as Connexxion's bus tickets do.
    case paddedRecordLengths = "padded-record-lengths"
    /// The U_TLAY field count with trailing spaces (`"3   "`) and the fields' numbers with leading spaces, as a
    /// 2023 Deutschland-Ticket of RICS 3076 and Connexxion do.
    case paddedLayoutNumbers = "padded-layout-numbers"
    /// U_TLAY text lengths counted in characters (`København H` as 11, not 12), as DSB and SJ do.
    case layoutLengthsInCharacters = "layout-lengths-in-characters"
    /// The U_TLAY record's own length counted in characters too, with its text lengths, as a genuine DSB ticket
    /// does (the record says 600 and spans 601 bytes).
    case layoutRecordLengthInCharacters = "layout-record-length-in-characters"
    /// A U_TLAY announcing more fields than it holds, as a Eurail test pass did.
    case fewerLayoutFields = "fewer-layout-fields"
    /// A U_TLAY whose text overruns the record: no tolerance reads it.
    case brokenLayout = "broken-layout"
    /// A 0080BL whose fields break after its validity (`S031`, `S032`).
    case brokenDisplayFields = "broken-display-fields"
    /// A `#UT` header of version 2 over a version 1 layout (a 50-byte DER signature field), as PKP Intercity
    /// writes it. Only for keys whose DER signature fits 50 bytes (DSA-1024).
    case version1LayoutInVersion2 = "version-1-layout-in-version-2"

    /// The quirks farecheck reads as meant (the others are breaks it lists as unreadable).
    public static let tolerated: [TicketQuirk] = [
        .paddedDataLength, .paddedRecordLengths, .paddedLayoutNumbers, .layoutLengthsInCharacters,
        .layoutRecordLengthInCharacters, .fewerLayoutFields, .version1LayoutInVersion2,
    ]

    /// The name farecheck's `issuer-quirk` warning gives a tolerated quirk (docs/issuer-quirks.md); `nil` for a
    /// break no tolerance reads.
    public var warningName: String? {
        switch self {
        case .paddedDataLength, .paddedRecordLengths, .paddedLayoutNumbers: "space-padded-number"
        case .layoutLengthsInCharacters, .layoutRecordLengthInCharacters: "length-in-characters"
        case .fewerLayoutFields: "fewer-fields-than-announced"
        case .version1LayoutInVersion2: "version-1-layout-in-version-2"
        case .brokenLayout, .brokenDisplayFields: nil
        }
    }

    /// One letter for the quirk in a ticket key.
    var letter: Character {
        switch self {
        case .paddedDataLength: "D"
        case .paddedRecordLengths: "R"
        case .paddedLayoutNumbers: "N"
        case .layoutLengthsInCharacters: "C"
        case .layoutRecordLengthInCharacters: "L"
        case .fewerLayoutFields: "F"
        case .brokenLayout: "B"
        case .brokenDisplayFields: "X"
        case .version1LayoutInVersion2: "V"
        }
    }
}

/// A rail issuer with its own test key, writing UIC 918.3 tickets with the quirks asked for and signing them the
/// way real issuers do: the signature covers the compressed bytes exactly as they stand in the barcode.
public struct QuirkyIssuer: Sendable {
    /// The signing key.
    public let privateKey: PrivateKey
    /// How tickets are signed.
    public let scheme: SignatureScheme
    /// The key list's algorithm text for the key, e.g. `SHA1withDSA(1024,160)`.
    public let algorithmText: String
    /// The `#UT` header version the issuer writes: 1 (DSA-1024, DER in 50 bytes) or 2 (raw `r ‖ s`).
    public let headerVersion: Int
    /// The RICS code in the header and `U_HEAD`.
    public var issuerCode = "1186"
    /// The key id in the header.
    public var keyID = "00001"

    /// An issuer signing with a new DSA-1024/SHA-1 key in version 1 containers.
    public static func dsa() throws -> QuirkyIssuer {
        QuirkyIssuer(
            privateKey: try .generate(.dsa(bits: 1024, qBits: 160)), scheme: .dsa(.sha1, .der),
            algorithmText: "SHA1withDSA(1024,160)", headerVersion: 1)
    }

    /// An issuer signing with a new ECDSA P-256 key in version 2 containers.
    public static func ecdsa() throws -> QuirkyIssuer {
        QuirkyIssuer(
            privateKey: try .generate(.ecP256), scheme: .ecdsa(.sha256, .der), algorithmText: "SHA256withECDSA",
            headerVersion: 2)
    }

    /// The public key, to trust or import.
    public var publicKey: PublicKey { privateKey.publicKey }

    /// The ticket key `U_HEAD` carries for a ticket with `quirks` (its id for revocations).
    public static func ticketKey(_ quirks: Set<TicketQuirk>) -> String {
        quirks.isEmpty ? "PLAIN" : "Q-" + String(quirks.map(\.letter).sorted())
    }

    /// The layout's texts, for tests to look for: one with letters of more than one UTF-8 byte.
    public static let layoutTexts = ["Ordinaer billet", "København H", "Malmö C"]

    /// A ticket valid from the first to the last day (Europe/Berlin days, as 0080BL states them), with `quirks`.
    ///
    /// Records: `U_HEAD` (issued the day before `from`, 08:00 Berlin), `0080BL` (a validity block, product
    /// `S001`, `S031`/`S032`, a price `S040`), `U_TLAY` (an RCT2 layout of three fields with Danish and Swedish
    /// station names).
    public func ticket(_ quirks: Set<TicketQuirk>, from: UICDay, until: UICDay) throws -> [UInt8] {
        let issued = from.start.addingTimeInterval(-16 * 3_600)
        let head = UICHead(issuerCode: issuerCode, ticketKey: Self.ticketKey(quirks), issuedAt: issued).record()
        let bl = Self.bl(from: from, until: until, brokenAfterValidity: quirks.contains(.brokenDisplayFields))
        let layout = Self.layoutBody(quirks)
        let padded = quirks.contains(.paddedRecordLengths)
        let inflated =
            Self.record(head.id, head.version, head.body, padded: padded)
            + Self.record(bl.id, bl.version, bl.body, padded: padded)
            + Self.record(
                UICLayout.recordID, "01", layout, padded: padded,
                lengthInCharacters: quirks.contains(.layoutRecordLengthInCharacters))
        let v1Layout = quirks.contains(.version1LayoutInVersion2)
        precondition(!v1Layout || headerVersion == 1, "a version 1 layout needs a DER signature of at most 50 bytes")
        var payload = try UIC918_3.encode(
            inflated: inflated, version: v1Layout ? 2 : headerVersion, issuerCode: issuerCode, keyID: keyID,
            signatureForm: v1Layout ? .der : nil, signatureFieldLength: v1Layout ? 50 : nil
        ) { compressed in try privateKey.signature(for: compressed, scheme: scheme) }
        if quirks.contains(.paddedDataLength) {
            // The length is not signed: it is written as the issuer's system writes it, after signing.
            let start = headerVersion == 1 ? 64 : 78
            let digits = Array(payload[start..<(start + 4)])
            let value = Int(String(decoding: digits, as: UTF8.self))!
            precondition(value < 1_000, "a data length below 1000 has a leading zero to write as a space")
            payload.replaceSubrange(start..<(start + 4), with: Array(Self.padded(value, width: 4).utf8))
        }
        return payload
    }

    /// A record with its length written with zeros (the standard) or spaces (`padded`), counted in bytes (the
    /// standard) or in characters.
    static func record(
        _ id: String, _ version: String, _ body: [UInt8], padded: Bool, lengthInCharacters: Bool = false
    ) -> [UInt8] {
        let length =
            UICRecord.headerLength
            + (lengthInCharacters ? String(decoding: body, as: UTF8.self).unicodeScalars.count : body.count)
        let text = padded ? Self.padded(length, width: 4) : Self.zeros(length, width: 4)
        return Array(id.utf8) + Array(version.utf8) + Array(text.utf8) + body
    }

    /// The 0080BL record; its fields break after `S032` when `brokenAfterValidity`.
    public static func bl(from: UICDay, until: UICDay, brokenAfterValidity: Bool) -> UICRecord {
        var record = UIC0080BL(
            validityBlocks: [.init(firstDay: from, lastDay: until, serial: "0000000042")],
            fields: [
                .init(tag: 1, value: "Ordinaer billet"), .init(tag: 31, value: from.description),
                .init(tag: 32, value: until.description), .init(tag: 40, value: "129,00"),
            ]
        ).record()
        if brokenAfterValidity {
            // S040's marker becomes "X": the field after the validity no longer reads as an S field.
            let marker = record.body.lastIndex(of: UInt8(ascii: "S"))!
            record.body[marker] = UInt8(ascii: "X")
        }
        return record
    }

    /// The body of an RCT2 `U_TLAY` of `layoutTexts`, written with the layout quirks among `quirks`.
    static func layoutBody(_ quirks: Set<TicketQuirk>) -> [UInt8] {
        let paddedNumbers = quirks.contains(.paddedLayoutNumbers)
        let characters =
            quirks.contains(.layoutLengthsInCharacters) || quirks.contains(.layoutRecordLengthInCharacters)
        let texts = layoutTexts
        let announced = texts.count + (quirks.contains(.fewerLayoutFields) ? 2 : 0)
        func number(_ value: Int, _ width: Int) -> String {
            paddedNumbers ? padded(value, width: width) : zeros(value, width: width)
        }
        // The count as the 3076 ticket writes it: digits first, spaces after.
        let count =
            paddedNumbers
            ? String(announced).padding(toLength: 4, withPad: " ", startingAt: 0) : zeros(announced, width: 4)
        var body = Array("RCT2".utf8) + Array(count.utf8)
        for (index, text) in texts.enumerated() {
            let bytes = Array(text.utf8)
            var length = characters ? text.unicodeScalars.count : bytes.count
            if quirks.contains(.brokenLayout), index == texts.count - 1 { length += 40 }
            body += Array((number(index, 2) + number(index == 0 ? 0 : 20, 2) + number(1, 2)).utf8)
            body += Array((number(20, 2) + number(0, 1) + number(length, 4)).utf8)
            body += bytes
        }
        return body
    }

    /// `value` right-aligned in `width` characters with spaces, e.g. `"  53"`.
    static func padded(_ value: Int, width: Int) -> String {
        let digits = String(value)
        return String(repeating: " ", count: max(0, width - digits.count)) + digits
    }

    /// `value` with leading zeros, e.g. `"0053"`.
    static func zeros(_ value: Int, width: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}
