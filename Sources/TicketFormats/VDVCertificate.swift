import FareCore

/// An 8-byte VDV CA reference (tag `42`, a certificate's CAR, the tail of a CA's CHR), e.g.
/// `DEVDV 11 02 16`: 2 ASCII letters of region, 3 of name, then two nibbles, a serial and a BCD year.
public struct VDVCAReference: Sendable, Hashable, CustomStringConvertible {
    /// The 8 bytes, big-endian in one number: compared and hashed as a whole, which is how a ticket names
    /// its CA (and costs one word on every scan, not eight bytes).
    let value: UInt64

    /// The 8 bytes.
    public var bytes: [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * UInt64($0))) } }

    /// A reference from exactly 8 bytes, or `nil` for another count.
    public init?(_ bytes: some Collection<UInt8>) {
        guard bytes.count == 8 else { return nil }
        value = bytes.reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// A reference from its 16 hex digits (`4445564456110216`), or `nil`.
    public init?(hex: String) {
        guard let bytes = [UInt8](hex: hex) else { return nil }
        self.init(bytes)
    }

    /// The region and name, e.g. `DEVDV` (non-ASCII bytes shown as `?`).
    public var name: String {
        String(decoding: bytes[0..<5].map { (0x20...0x7E).contains($0) ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
    }

    /// The service indicator (high nibble of byte 5): 0 authentication, 1 digital signature, ….
    public var serviceIndicator: Int { Int(bytes[5] >> 4) }
    /// The discretionary data (low nibble of byte 5): 0 root CA, 1 sub-CA (production); 2–9 test environments.
    public var discretionaryData: Int { Int(bytes[5] & 0x0F) }
    /// The certificate serial number (byte 6).
    public var serial: Int { Int(bytes[6]) }
    /// The generation year, 2000 + the BCD byte 7, or `nil` when it is not BCD.
    public var year: Int? { VDVBCD.number(bytes[7...]).map { 2000 + $0 } }

    /// The 16 uppercase hex digits, as LDAP `cn` and certificate file names write it.
    public var hex: String { bytes.hexString.uppercased() }

    /// `DEVDV 11 02 16`: the name, then bytes 5–7 in hex.
    public var description: String { "\(name) \(bytes[5...].map { Self.twoHex($0) }.joined(separator: " "))" }

    private static func twoHex(_ byte: UInt8) -> String {
        let text = String(byte, radix: 16, uppercase: true)
        return text.count == 1 ? "0" + text : text
    }
}

/// A ticket issuer's SAM as a certificate holder (CHR): the organisation responsible, the SAM's
/// expiry month and start day, the owner organisation and the SAM number.
public struct VDVSAMHolder: Sendable, Hashable {
    /// The organisation responsible for the SAM (bytes 0–1).
    public var organisationID: Int
    /// The year of the SAM's expiry (BCD byte 2, 20YY), when readable.
    public var samExpiryYear: Int?
    /// The month of the SAM's expiry (BCD byte 3), when readable.
    public var samExpiryMonth: Int?
    /// The SAM's first day of validity (BCD bytes 4–6, YYMMDD), when readable.
    public var samValidFrom: UICDay?
    /// The organisation owning the SAM (bytes 7–8).
    public var ownerOrganisationID: Int
    /// The SAM number (bytes 9–11), as the ticket's issue data repeats it.
    public var samID: Int
}

/// The holder of a CV certificate (CHR, 12 bytes), read as what it names.
public enum VDVCertificateHolder: Sendable, Hashable, CustomStringConvertible {
    /// A certification authority: `00 00 00 00` + its CA reference.
    case authority(VDVCAReference)
    /// A ticket issuer's SAM.
    case sam(VDVSAMHolder)
    /// Any other holder (user media, unknown layouts), as its bytes.
    case other([UInt8])

    /// Reads a 12-byte CHR.
    public init(_ bytes: [UInt8]) {
        guard bytes.count == 12 else {
            self = .other(bytes)
            return
        }
        if bytes[0..<4].allSatisfy({ $0 == 0 }), let reference = VDVCAReference(bytes[4...]) {
            self = .authority(reference)
        } else if bytes[2] == 0xFF {
            // A user medium (org id, FF, application instance, …): not an issuer.
            self = .other(bytes)
        } else {
            let month = VDVBCD.number(bytes[3...3])
            self = .sam(
                VDVSAMHolder(
                    organisationID: Int(bytes[0]) << 8 | Int(bytes[1]),
                    samExpiryYear: VDVBCD.number(bytes[2...2]).map { 2000 + $0 },
                    samExpiryMonth: month.flatMap { (1...12).contains($0) ? $0 : nil },
                    samValidFrom: VDVBCD.day(yymmdd: bytes[4..<7]),
                    ownerOrganisationID: Int(bytes[7]) << 8 | Int(bytes[8]),
                    samID: Int(bytes[9]) << 16 | Int(bytes[10]) << 8 | Int(bytes[11])))
        }
    }

    /// `CA DEVDV 11 02 16`, `SAM 118017 of organisation 6060`, or hex.
    public var description: String {
        switch self {
        case .authority(let reference): "CA \(reference)"
        case .sam(let sam): "SAM \(sam.samID) of organisation \(sam.organisationID)"
        case .other(let bytes): bytes.hexString.uppercased()
        }
    }
}

/// The key algorithm a CV certificate names by object identifier.
public enum VDVKeyAlgorithm: Sendable, Hashable, CustomStringConvertible {
    /// 1.3.36.3.4.2.2.1: TeleTrusT ISO/IEC 9796-2 with SHA-1 and RSA (7 bytes).
    case iso9796WithSHA1AndRSA
    /// 1.2.840.113549.1.1.5: sha1WithRSAEncryption (9 bytes), used by the root and some sub-CAs.
    case sha1WithRSAEncryption
    /// Another identifier, as its content bytes.
    case other([UInt8])

    static let iso9796OID: [UInt8] = [0x2B, 0x24, 0x03, 0x04, 0x02, 0x02, 0x01]
    static let sha1WithRSAOID: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x05]

    init(oid: [UInt8]) {
        switch oid {
        case Self.iso9796OID: self = .iso9796WithSHA1AndRSA
        case Self.sha1WithRSAOID: self = .sha1WithRSAEncryption
        default: self = .other(oid)
        }
    }

    /// The identifier's content bytes.
    public var oid: [UInt8] {
        switch self {
        case .iso9796WithSHA1AndRSA: Self.iso9796OID
        case .sha1WithRSAEncryption: Self.sha1WithRSAOID
        case .other(let bytes): bytes
        }
    }

    /// The dotted identifier and, when known, its name.
    public var description: String {
        switch self {
        case .iso9796WithSHA1AndRSA: "1.3.36.3.4.2.2.1 (ISO 9796-2 with SHA-1 and RSA)"
        case .sha1WithRSAEncryption: "1.2.840.113549.1.1.5 (sha1WithRSAEncryption)"
        case .other(let bytes): bytes.hexString.uppercased()
        }
    }
}

/// What a CV certificate allows its key to do (CHA, 7 bytes: 6 ASCII characters and a nibble pair).
public struct VDVCertificateAuthorization: Sendable, Hashable, CustomStringConvertible {
    /// The application name, `VDV_KA`.
    public var application: String
    /// The allowed command (high nibble): 1 load key (verification), 2 verify digital signature,
    /// 3 verify certificate, 4 authenticate, 5 load key (encryption).
    public var command: Int
    /// The role (low nibble): 0 CA, 1 user medium, 2 unrestricted SAM, 4/8 SAM without sales, ….
    public var role: Int

    /// `VDV_KA 0x22`.
    public var description: String {
        let byte = String(command << 4 | role, radix: 16, uppercase: true)
        return "\(application) 0x\(byte.count == 1 ? "0" + byte : byte)"
    }
}

/// A VDV CV certificate body (the 5F4E content, or the message recovered from 5F37/5F38):
/// who signed it, whom it is for, until when, and the RSA key it carries.
public struct VDVCertificate: Sendable, Hashable {
    /// The body bytes exactly as read or recovered.
    public var body: [UInt8]
    /// The certificate profile identifier: 3 (RSA 1536), 4/5/6 (RSA 1024), 7 (RSA 1984).
    public var profile: Int
    /// The CA that signed this certificate (CAR).
    public var authority: VDVCAReference
    /// The holder reference (CHR) as its 12 bytes.
    public var holderBytes: [UInt8]
    /// What the authorisation (CHA) allows.
    public var authorization: VDVCertificateAuthorization
    /// The last day of validity (BCD YYYYMMDD); `nil` when the bytes are not a date.
    public var expiry: UICDay?
    /// The key algorithm.
    public var algorithm: VDVKeyAlgorithm
    /// The RSA modulus n, big-endian.
    public var modulus: [UInt8]
    /// The RSA public exponent e, big-endian, 4 bytes (not always 65537).
    public var exponent: [UInt8]

    /// The holder, read.
    public var holder: VDVCertificateHolder { VDVCertificateHolder(holderBytes) }

    /// The CA reference this certificate stands for, when its holder is a CA: what tickets and
    /// sub-CAs name in their CAR. Certificates are found by this, never by their file name.
    public var holderReference: VDVCAReference? {
        if case .authority(let reference) = holder { return reference }
        return nil
    }

    /// Whether the certificate names itself as its signer (CAR = the last 8 bytes of CHR): a root.
    public var isSelfSigned: Bool { holderBytes.suffix(8).elementsEqual(authority.bytes) }

    /// The key size in bits, from the modulus.
    public var keyBits: Int {
        let significant = modulus.drop { $0 == 0 }
        guard let first = significant.first else { return 0 }
        return significant.count * 8 - first.leadingZeroBitCount
    }

    /// The modulus size each profile fixes, in bytes.
    static func modulusByteCount(profile: Int) -> Int? {
        switch profile {
        case 3: 192
        case 4, 5, 6: 128
        case 7: 248
        default: nil
        }
    }

    /// Reads a certificate body.
    ///
    /// - Parameters:
    ///   - body: The body bytes.
    ///   - context: What the body is (for messages), e.g. `the issuer certificate`.
    /// - Throws: `FormatError.malformed` naming the offset when a field is missing or the body does
    ///   not end right after the 4-byte exponent; `.unsupported` for an unknown profile.
    public init(parsing body: [UInt8], context: String = "the certificate") throws(FormatError) {
        guard body.count >= 39 else {
            throw .malformed("\(context) has \(body.count) bytes; a CV certificate body has at least 39 before its key")
        }
        let profile = Int(body[0])
        guard let modulusCount = Self.modulusByteCount(profile: profile) else {
            throw .unsupported("\(context) has certificate profile \(profile) (byte 0); 3, 4, 5, 6 and 7 are known")
        }
        let oidCount = body[32] == 0x2A ? 9 : 7
        let modulusStart = 32 + oidCount
        let expected = modulusStart + modulusCount + 4
        guard body.count == expected else {
            throw .malformed(
                "\(context) has \(body.count) bytes; profile \(profile) with a \(oidCount)-byte OID at byte 32 needs \(expected) (modulus at byte \(modulusStart), 4-byte exponent at byte \(modulusStart + modulusCount))"
            )
        }
        let application = body[21..<27]
        guard application.allSatisfy({ (0x20...0x7E).contains($0) }) else {
            throw .malformed("the authorisation of \(context) (bytes 21–26) is not ASCII text")
        }
        guard let authority = VDVCAReference(body[1..<9]) else {
            throw .malformed("the CA reference of \(context) (bytes 1–8) is missing")
        }
        self.body = body
        self.profile = profile
        self.authority = authority
        self.holderBytes = Array(body[9..<21])
        self.authorization = VDVCertificateAuthorization(
            application: String(decoding: application, as: UTF8.self), command: Int(body[27] >> 4),
            role: Int(body[27] & 0x0F))
        self.expiry = VDVBCD.day(yyyymmdd: body[28..<32])
        self.algorithm = VDVKeyAlgorithm(oid: Array(body[32..<modulusStart]))
        self.modulus = Array(body[modulusStart..<(modulusStart + modulusCount)])
        self.exponent = Array(body[(modulusStart + modulusCount)...])
    }
}

/// A certificate as carried in a `7F21` element: either a body hidden in an ISO 9796-2 signature
/// (`5F37` + `5F38`: tickets, published sub-CAs) or a body in clear (`5F4E`, with or without a
/// `5F37` signature: the published root, and the kitinerary certificate files).
public enum VDVCertificateEnvelope: Sendable, Hashable {
    /// The body must be recovered from `signature` with the signer's key; `remainder` is the part in clear.
    case recoverable(signature: [UInt8], remainder: [UInt8])
    /// The body in clear, with the signature over it when there is one.
    case clear(body: [UInt8], signature: [UInt8]?)

    /// Reads the content of a `7F21` element.
    ///
    /// - Parameters:
    ///   - element: The `7F21` element, with offsets of the buffer it came from.
    ///   - buffer: That buffer, so that errors name offsets in it.
    ///   - context: What the certificate is, for messages.
    /// - Throws: `FormatError.malformed` for another tag, a missing part, or parts in another order.
    public init(_ element: BERTLV, in buffer: [UInt8], context: String) throws(FormatError) {
        let span = BERTLVSpan(
            tag: BERTLVSpan.packed(element.tag), tagLength: element.tag.count, offset: element.offset,
            valueOffset: element.valueOffset, end: element.end)
        switch try Parts(span, in: buffer, context: context) {
        case .recoverable(let signature, let remainder):
            self = .recoverable(signature: Array(buffer[signature]), remainder: Array(buffer[remainder]))
        case .clear(let body, let signature):
            self = .clear(body: Array(buffer[body]), signature: signature.map { Array(buffer[$0]) })
        }
    }

    /// Where the parts of a `7F21` element lie in its buffer: what the envelope holds, nothing copied.
    enum Parts {
        case recoverable(signature: Range<Int>, remainder: Range<Int>)
        case clear(body: Range<Int>, signature: Range<Int>?)

        private static let signatureTag = BERTLVSpan.packed(VDVTag.certificateSignature)
        private static let remainderTag = BERTLVSpan.packed(VDVTag.certificateRemainder)
        private static let bodyTag = BERTLVSpan.packed(VDVTag.certificateBody)
        private static let certificateTag = BERTLVSpan.packed(VDVTag.certificate)

        /// Reads the parts of the certificate element `element` of `buffer`.
        ///
        /// - Throws: `FormatError.malformed` for another tag, broken TLVs, or another set of parts.
        init(_ element: BERTLVSpan, in buffer: [UInt8], context: String) throws(FormatError) {
            guard element.tag == Self.certificateTag else {
                throw .malformed("\(context) at byte \(element.offset) has tag \(element.tagHex) instead of 7F21")
            }
            // Two parts at most are meaningful: they are kept without an array; any further ones are counted.
            var first: BERTLVSpan?
            var second: BERTLVSpan?
            var count = 0
            var position = element.valueOffset
            while position < element.end {
                let part = try BERTLVSpan(in: buffer, at: position, end: element.end, context: context)
                if count == 0 { first = part } else if count == 1 { second = part }
                count += 1
                position = part.end
            }
            switch (count, first, second) {
            case (2, let signature?, let remainder?)
            where signature.tag == Self.signatureTag && remainder.tag == Self.remainderTag:
                self = .recoverable(signature: signature.valueRange, remainder: remainder.valueRange)
            case (1, let body?, nil) where body.tag == Self.bodyTag:
                self = .clear(body: body.valueRange, signature: nil)
            case (2, let body?, let signature?) where body.tag == Self.bodyTag && signature.tag == Self.signatureTag:
                self = .clear(body: body.valueRange, signature: signature.valueRange)
            default:
                let parts = (try? BERTLVSpan.spans(in: buffer, range: element.valueRange, context: context)) ?? []
                let found = parts.map(\.tagHex).joined(separator: ", ")
                throw .malformed(
                    "\(context) at byte \(element.offset) holds [\(found)]; expected 5F37 + 5F38 or 5F4E (+ 5F37)")
            }
        }
    }

    public init(parsingFile bytes: [UInt8]) throws(FormatError) {
        let elements = try BERTLV.elements(in: bytes, context: "the certificate file")
        guard elements.count == 1, let element = elements.first else {
            throw .malformed("the certificate file holds \(elements.count) top-level elements; expected one 7F21")
        }
        try self.init(element, in: bytes, context: "the certificate")
    }
}

/// The tags of VDV-KA barcodes and certificates.
public enum VDVTag {
    /// ISO 9796-2 signature over the ticket data.
    public static let ticketSignature: [UInt8] = [0x9E]
    /// The ticket data that did not fit into the signature.
    public static let ticketRemainder: [UInt8] = [0x9A]
    /// A CV certificate (constructed).
    public static let certificate: [UInt8] = [0x7F, 0x21]
    /// A certificate's signature.
    public static let certificateSignature: [UInt8] = [0x5F, 0x37]
    /// A certificate's remainder (the body bytes that did not fit into the signature).
    public static let certificateRemainder: [UInt8] = [0x5F, 0x38]
    /// A certificate body in clear.
    public static let certificateBody: [UInt8] = [0x5F, 0x4E]
    /// The CA reference naming the key that signed the issuer certificate.
    public static let caReference: [UInt8] = [0x42]
    /// The several-authorisations variant's container.
    public static let multipleAuthorizations: [UInt8] = [0xEF]
}

/// Binary-coded decimal fields of VDV data.
enum VDVBCD {
    /// The number of a run of BCD bytes, or `nil` when a nibble is above 9.
    static func number(_ bytes: some Collection<UInt8>) -> Int? {
        var value = 0
        for byte in bytes {
            let high = Int(byte >> 4)
            let low = Int(byte & 0x0F)
            guard high <= 9, low <= 9 else { return nil }
            value = value * 100 + high * 10 + low
        }
        return value
    }

    /// A day written as 4 BCD bytes `YYYYMMDD`, or `nil` (all zero, not BCD, not a day).
    static func day(yyyymmdd bytes: ArraySlice<UInt8>) -> UICDay? {
        let start = bytes.startIndex
        guard bytes.count == 4, let year = number(bytes[start..<(start + 2)]),
            let month = number(bytes[(start + 2)...(start + 2)]),
            let day = number(bytes[(start + 3)...(start + 3)])
        else { return nil }
        return UICDay(year: year, month: month, day: day)
    }

    /// A day written as 3 BCD bytes `YYMMDD` (20YY), or `nil`.
    static func day(yymmdd bytes: some Collection<UInt8>) -> UICDay? {
        let bytes = Array(bytes)
        guard bytes.count == 3, let year = number(bytes[0...0]), let month = number(bytes[1...1]),
            let day = number(bytes[2...2])
        else { return nil }
        return UICDay(year: 2000 + year, month: month, day: day)
    }
}
