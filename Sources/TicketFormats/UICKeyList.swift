import FareCore
import Foundation

/// A hash function named by a UIC key list entry.
///
/// farecheck's own small enum: `TicketFormats` names what the list says; the verifier maps it onto the
/// digests of its signature module.
public enum UICHash: String, Sendable, Hashable, CaseIterable {
    /// SHA-1, for DSA 1024/160 keys.
    case sha1
    /// SHA-224, for DSA 2048/224 keys.
    case sha224
    /// SHA-256, for DSA 2048/256 and P-256 keys.
    case sha256
}

/// The signature algorithm of a UIC key list entry, read from its free-text `signatureAlgorithm`.
///
/// An empty hash list means the text names no hash (`DSA1024`): the verifier then tries the hashes
/// that fit the key size.
public enum UICSignatureAlgorithm: Sendable, Hashable {
    /// DSA with the hashes that the text names.
    case dsa(hashes: [UICHash])
    /// ECDSA with the hashes that the text names.
    case ecdsa(hashes: [UICHash])
    /// A text that names neither DSA nor ECDSA.
    case unknown

    /// Reads the spellings found in the UIC list: `SHA1withDSA(1024,160)`, `SHA1-DSA (1024)`,
    /// `DSA_SHA1 (1024)`, `DSA1024`, `SHA224withDSA`, `SHA256withDSA(2048,256)`, `SHA256withECDSA`, ….
    public init(text: String) {
        // Case, spaces, hyphens and underscores vary between issuers; the letters and digits do not.
        let compact = String(text.uppercased().unicodeScalars.filter { CharacterSet.alphanumerics.contains($0) })
        var named: Set<UICHash> = []
        // Longest names first, each match removed, so that one name is never also read as another.
        var rest = compact
        let names: [(String, UICHash)] = [("SHA224", .sha224), ("SHA256", .sha256), ("SHA1", .sha1)]
        for (name, hash) in names where rest.contains(name) {
            named.insert(hash)
            rest = rest.replacingOccurrences(of: name, with: "")
        }
        let hashes = UICHash.allCases.filter(named.contains)
        if compact.contains("ECDSA") {
            self = .ecdsa(hashes: hashes)
        } else if compact.contains("DSA") {
            self = .dsa(hashes: hashes)
        } else {
            self = .unknown
        }
    }

    /// The hashes the text names; empty when it names none.
    public var hashes: [UICHash] {
        switch self {
        case .dsa(let hashes), .ecdsa(let hashes): hashes
        case .unknown: []
        }
    }
}

/// The UIC's list of public keys for 918.3 barcodes, as published in XML (`<keys><key>…</key></keys>`).
///
/// The live list is messy: codes with and without leading zeros, many spellings of the algorithm,
/// certificates that do not decode. The import keeps every good entry and reports each bad one; one bad
/// entry never aborts it.
public struct UICKeyList: Sendable {
    /// One key of the list.
    public struct Entry: Sendable, Hashable {
        /// The company, e.g. `Deutsche Bahn AG`.
        public var issuerName: String
        /// The issuer code as the list writes it (`80`, `1080`).
        public var issuerCode: String
        /// The key id as the list writes it (`7`, `00007`, `DTX01`).
        public var keyID: String
        /// What the key signs: `TLB` (918.3), `FCB`, `DOS` (918.9), `SSB`, ….
        public var versionType: String
        /// The algorithm as the list writes it.
        public var signatureAlgorithmText: String
        /// The algorithm as farecheck reads it.
        public var signatureAlgorithm: UICSignatureAlgorithm
        /// The X.509 certificate (DER) that carries the public key.
        public var certificateDER: [UInt8]
        /// The barcode version the key is for, as written (`1`, `2`, `3`), or empty.
        public var barcodeVersion: String
        /// The first instant of the start date (00:00 UTC), or `nil` when the list gives none.
        public var validFrom: Date?
        /// The last second of the end date (23:59:59 UTC), or `nil` when the list gives none.
        public var validUntil: Date?
        /// Whether the list marks the key as forged (`keyForged`): its private key is known to others, so a
        /// signature made with it proves nothing.
        public var forged: Bool
        /// The product owners (RICS codes, normalised) whose products the key may sign, as the list's
        /// `allowedProductOwnerCodes` names them; empty when the list names none.
        public var allowedProductOwnerCodes: [String]

        /// An entry; the algorithm is read from `signatureAlgorithmText`.
        public init(
            issuerName: String, issuerCode: String, keyID: String, versionType: String,
            signatureAlgorithmText: String, certificateDER: [UInt8], barcodeVersion: String,
            validFrom: Date?, validUntil: Date?, forged: Bool = false, allowedProductOwnerCodes: [String] = []
        ) {
            self.issuerName = issuerName
            self.issuerCode = issuerCode
            self.keyID = keyID
            self.versionType = versionType
            self.signatureAlgorithmText = signatureAlgorithmText
            self.signatureAlgorithm = UICSignatureAlgorithm(text: signatureAlgorithmText)
            self.certificateDER = certificateDER
            self.barcodeVersion = barcodeVersion
            self.validFrom = validFrom
            self.validUntil = validUntil
            self.forged = forged
            self.allowedProductOwnerCodes = allowedProductOwnerCodes
        }

        /// `issuerCode` normalized for matching (see `UICKeyList.normalizedCode`).
        public var normalizedIssuerCode: String { UICKeyList.normalizedCode(issuerCode) }
        /// `keyID` normalized for matching (see `UICKeyList.normalizedCode`).
        public var normalizedKeyID: String { UICKeyList.normalizedCode(keyID) }

        /// Whether this entry is the key that a container header names.
        public func matches(issuerCode: String, keyID: String) -> Bool {
            normalizedIssuerCode == UICKeyList.normalizedCode(issuerCode)
                && normalizedKeyID == UICKeyList.normalizedCode(keyID)
        }
    }

    /// An entry that could not be imported, and why.
    public struct Problem: Error, Sendable, Hashable, CustomStringConvertible {
        /// The entry's issuer code as written (empty when missing).
        public var issuerCode: String
        /// The entry's key id as written (empty when missing).
        public var keyID: String
        /// A sentence saying what is wrong.
        public var message: String

        public init(issuerCode: String, keyID: String, message: String) {
            self.issuerCode = issuerCode
            self.keyID = keyID
            self.message = message
        }

        /// `key ISSUER/ID: message`.
        public var description: String { "key \(issuerCode)/\(keyID): \(message)" }
    }

    /// The entries that were imported, in list order.
    public var entries: [Entry]
    /// The entries that were not, in list order.
    public var problems: [Problem]

    /// A list of entries and problems, e.g. for tests.
    public init(entries: [Entry], problems: [Problem] = []) {
        self.entries = entries
        self.problems = problems
    }

    /// The entries for the key a container header names, matched numerically (`80` = `0080`).
    public func entries(issuerCode: String, keyID: String) -> [Entry] {
        entries.filter { $0.matches(issuerCode: issuerCode, keyID: keyID) }
    }

    /// Whether an issuer names a UIC railway by its RICS company code: one to four ASCII digits (`80`, `0080`,
    /// `1184`), not the text issuers of other formats.
    public static func isRICSCode(_ issuer: String) -> Bool {
        (1...4).contains(issuer.utf8.count) && issuer.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
    }

    /// An issuer as the store keeps it and verification matches it: a RICS code normalised (`0080` → `80`),
    /// any other issuer as it is.
    /// `storedIssuer(_:)` of an issuer.
    public static func storedIssuer(_ issuer: IssuerID) -> IssuerID { IssuerID(storedIssuer(issuer.rawValue)) }

    public static func storedIssuer(_ issuer: String) -> String {
        isRICSCode(issuer) ? normalizedCode(issuer) : issuer
    }

    /// A code for matching: trimmed; all digits → without leading zeros (`0080` → `80`, `00007` → `7`,
    /// `0` stays `0`); anything else kept as text (`TT005`).
    /// `normalizedCode(_:)` of an issuer: `0080` and `80` are one issuer.
    public static func normalizedCode(_ issuer: IssuerID) -> IssuerID { IssuerID(normalizedCode(issuer.rawValue)) }

    public static func normalizedCode(_ text: String) -> String {
        // Most codes are already as matched (`1080`, `TT005`): returned as they are, for every scan.
        let utf8 = text.utf8
        if let first = utf8.first, let last = utf8.last, first != UInt8(ascii: "0") || utf8.count == 1,
            first > 0x20, last > 0x20
        {
            return text
        }
        let trimmed = text.trimmingASCIIWhitespace()
        guard !trimmed.isEmpty, trimmed.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return trimmed }
        let stripped = trimmed.drop { $0 == "0" }
        return stripped.isEmpty ? "0" : String(stripped)
    }

    /// Reads the XML key list.
    ///
    /// Each `<key>` needs `issuerCode`, `id` and a `publicKey` whose base64 decodes to a DER structure;
    /// an entry without them, or with a start or end date that is not `YYYY-MM-DD`, becomes a `Problem`.
    /// Dates are UTC days: the start at 00:00:00, the end at 23:59:59 (the list names no zone). Other
    /// elements are ignored.
    ///
    /// - Throws: `malformed`, naming the offset, only when the document itself cannot be read as XML
    ///   or its root is not `<keys>`.
    public static func parse(xml: [UInt8]) throws(FormatError) -> UICKeyList {
        let root = try UICXMLReader.parse(xml)
        guard root.name == "keys" else {
            throw .malformed("the key list's root element at byte \(root.offset) is <\(root.name)>, not <keys>")
        }
        var list = UICKeyList(entries: [])
        for element in root.children where element.name == "key" {
            switch entry(element) {
            case .success(let entry): list.entries.append(entry)
            case .failure(let problem): list.problems.append(problem)
            }
        }
        return list
    }

    private static func entry(_ element: UICXMLReader.Element) -> Result<Entry, Problem> {
        func field(_ name: String) -> String {
            (element.children.first { $0.name == name }?.text ?? "").trimmingASCIIWhitespace()
        }
        let issuerCode = field("issuerCode")
        let keyID = field("id")
        func problem(_ message: String) -> Result<Entry, Problem> {
            .failure(Problem(issuerCode: issuerCode, keyID: keyID, message: message))
        }
        guard !issuerCode.isEmpty else { return problem("the entry at byte \(element.offset) has no issuerCode") }
        guard !keyID.isEmpty else { return problem("the entry at byte \(element.offset) has no id") }
        let encoded = field("publicKey")
        guard !encoded.isEmpty else { return problem("the entry at byte \(element.offset) has no publicKey") }
        guard let der = UICBase64.decode(encoded) else {
            return problem("the publicKey of the entry at byte \(element.offset) is not valid base64")
        }
        guard isDERSequence(der) else {
            return problem(
                "the publicKey of the entry at byte \(element.offset) decodes to \(der.count) bytes "
                    + "that are not one DER structure (a certificate)"
            )
        }
        var dates: [Date?] = []
        for (name, isEnd) in [("startDate", false), ("endDate", true)] {
            let text = field(name)
            if text.isEmpty {
                dates.append(nil)
                continue
            }
            guard let day = isoDay(text) else {
                return problem("the \(name) of the entry at byte \(element.offset) is \"\(text)\", not YYYY-MM-DD")
            }
            let seconds = UICTime.daysFromCivil(year: day.year, month: day.month, day: day.day) * 86_400
            dates.append(Date(timeIntervalSince1970: TimeInterval(seconds + (isEnd ? 86_399 : 0))))
        }
        let forgedText = field("keyForged")
        guard let forged = forgedFlag(forgedText) else {
            return problem(
                "the keyForged of the entry at byte \(element.offset) is \"\(forgedText)\", not true or false: "
                    + "a key that may be forged is kept out")
        }
        // `<allowedProductOwnerCodes>` holds `<productOwnerCode>` and `<productOwnerName>` pairs; the codes decide.
        var owners: [String] = []
        for list in element.children where list.name == "allowedProductOwnerCodes" {
            for code in list.children where code.name == "productOwnerCode" {
                let text = code.text.trimmingASCIIWhitespace()
                guard !text.isEmpty else { continue }
                guard isRICSCode(text) else {
                    return problem(
                        "the allowedProductOwnerCodes of the entry at byte \(element.offset) name \"\(text)\", "
                            + "not a RICS code: the key's limit cannot be read, so it is kept out")
                }
                owners.append(normalizedCode(text))
            }
        }
        return .success(
            Entry(
                issuerName: field("issuerName"), issuerCode: issuerCode, keyID: keyID,
                versionType: field("versionType"),
                signatureAlgorithmText: field("signatureAlgorithm"), certificateDER: der,
                barcodeVersion: field("barcodeVersion"), validFrom: dates[0], validUntil: dates[1], forged: forged,
                allowedProductOwnerCodes: owners
            )
        )
    }

    /// `keyForged` as the list writes it: empty (the usual `<keyForged/>`) or a false word is `false`, a true
    /// word `true`; anything else is `nil` (unreadable).
    private static func forgedFlag(_ text: String) -> Bool? {
        switch text.lowercased() {
        case "", "false", "0", "no", "n": false
        case "true", "1", "yes", "y": true
        default: nil
        }
    }

    /// `YYYY-MM-DD`.
    private static func isoDay(_ text: String) -> UICDay? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].utf8.count == 4, parts[1].utf8.count == 2, parts[2].utf8.count == 2,
            let year = UICFieldCursor.asciiNumber(parts[0].utf8),
            let month = UICFieldCursor.asciiNumber(parts[1].utf8),
            let day = UICFieldCursor.asciiNumber(parts[2].utf8)
        else { return nil }
        return UICDay(year: year, month: month, day: day)
    }

    /// Whether `bytes` are exactly one DER `SEQUENCE` whose length header matches their count: a cheap
    /// check that catches a truncated certificate before the signature module parses it.
    private static func isDERSequence(_ bytes: [UInt8]) -> Bool {
        guard bytes.count >= 2, bytes[0] == 0x30 else { return false }
        let first = Int(bytes[1])
        if first < 0x80 { return bytes.count == 2 + first }
        let lengthBytes = first & 0x7F
        guard (1...3).contains(lengthBytes), bytes.count >= 2 + lengthBytes else { return false }
        var length = 0
        for index in 0..<lengthBytes { length = length << 8 | Int(bytes[2 + index]) }
        return bytes.count == 2 + lengthBytes + length
    }
}

/// Base64 (RFC 4648, standard alphabet) as published in key lists: whitespace inside is ignored,
/// padding is optional, anything else fails.
enum UICBase64 {
    static func decode(_ text: String) -> [UInt8]? {
        var values: [UInt8] = []
        values.reserveCapacity(text.utf8.count)
        var padding = 0
        for byte in text.utf8 {
            switch byte {
            case 0x20, 0x09, 0x0A, 0x0D: continue
            case UInt8(ascii: "="):
                padding += 1
                continue
            default: break
            }
            // Data after padding means two documents glued together, or a damaged one.
            guard padding == 0, let value = value(of: byte) else { return nil }
            values.append(value)
        }
        guard padding <= 2, values.count % 4 != 1, padding == 0 || (values.count + padding) % 4 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(values.count * 3 / 4)
        var index = 0
        while index + 1 < values.count {
            let chunk = values[index..<min(index + 4, values.count)]
            var group = 0
            for (position, value) in chunk.enumerated() { group |= Int(value) << (18 - 6 * position) }
            bytes.append(UInt8(group >> 16 & 0xFF))
            if chunk.count > 2 { bytes.append(UInt8(group >> 8 & 0xFF)) }
            if chunk.count > 3 { bytes.append(UInt8(group & 0xFF)) }
            index += 4
        }
        return bytes
    }

    private static func value(of byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): byte - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): byte - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+"): 62
        case UInt8(ascii: "/"): 63
        default: nil
        }
    }
}
