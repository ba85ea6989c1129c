import FareCore

/// A payload whose format has been recognised and whose envelope has been taken apart.
public enum RecognisedPayload: Sendable {
    /// An FC1 ticket: the COSE_Sign1 message (signature not yet checked) and how it was carried.
    case fc1(COSESign1, transport: FC1.Transport)
    /// A UIC 918.3 rail ticket: the container taken apart, records inflated, signature not yet checked.
    case uic(UICContainer)
    /// A VDV-KA static barcode (Deutschland-Ticket et al.): the envelope taken apart, ticket data and
    /// issuer certificate still hidden in their signatures.
    case vdv(VDVBarcode)

    /// An ERA SSB ticket: the frame with its signature split off (fields decoded after the signature check).
    case ssb(SSBFrame)

    /// A UIC 918.9 DOSIPAS barcode (`U1`/`U2`): header taken apart, signed bytes cut out, nothing checked yet.
    case dosipas(DOSIPASBarcode)

    /// A UK RSP6 text: the clear header read and the letters turned into the RSA block, nothing recovered yet.
    case rsp6(RSP6Barcode)

    /// The payload's format.
    public var format: TicketFormat {
        switch self {
        case .fc1: .fc1
        case .uic: .uic9183
        case .ssb: .eraSSB
        case .vdv: .vdvKA
        case .dosipas: .uic9189
        case .rsp6: .ukRSP6
        }
    }
}

/// Recognises the format of a scanned payload and unwraps its transport encoding.
///
/// The first step of verification: bytes in, an envelope out, or a `FormatError` saying why not.
public struct PayloadDetector: Sendable {
    /// Text prefixes accepted for the FC1 base45 transport, e.g. `["FC1:"]`.
    public var acceptedPrefixes: [String]
    /// The cap on inflated size.
    public var inflateLimit: Int

    public init(acceptedPrefixes: [String] = [FC1.defaultPrefix], inflateLimit: Int = Zlib.defaultInflateLimit) {
        self.acceptedPrefixes = acceptedPrefixes
        self.inflateLimit = inflateLimit
    }

    /// Recognises `payload` and unwraps it.
    public func recognise(_ payload: [UInt8]) throws(FormatError) -> RecognisedPayload {
        guard !payload.isEmpty else { throw .malformed("the payload is empty") }
        if UIC918_3.isContainer(payload) {
            return .uic(try UICContainer(parsing: payload, inflateLimit: inflateLimit))
        }
        if payload.starts(with: [0x7F, 0x70]) {
            throw .unsupported(
                "the payload is a MOTICS container (7F70, ECDSA around a VDV barcode), which farecheck does not read yet"
            )
        }
        // A first byte of 9E (or EF for several authorisations) is neither text, COSE, zlib nor UIC.
        if VDVBarcode.isBarcode(payload) || VDVBarcode.isMultipleAuthorizationBarcode(payload) {
            return .vdv(try VDVBarcode(parsing: payload))
        }
        // DOSIPAS starts 0x01/0x81, 0x55, 0x62–0x67 (see `DOSIPASBarcode.isBarcode`): bytes no other format
        // here starts with (FC1 text, COSE 0xD2/0x84, zlib 0x78, `#UT`), so the check cannot take their payloads.
        if DOSIPASBarcode.isBarcode(payload) {
            return .dosipas(try DOSIPASBarcode(decoding: payload))
        }
        // Compared through the strings' UTF-8 views: no array of the prefix's bytes is made for every payload.
        for prefix in acceptedPrefixes {
            if payload.starts(with: prefix.utf8) {
                let text = payload[prefix.utf8.count...]
                let compressed = try Base45.decode(text)
                guard Zlib.looksLikeZlib(compressed) else {
                    throw .malformed("the base45 text after \(prefix) does not hold a zlib stream")
                }
                let cose = try Zlib.inflate(compressed, limit: inflateLimit)
                return .fc1(try COSESign1(decoding: cose), transport: .text(prefix: prefix))
            }
        }
        // After `#UT` and the FC1 prefixes, before the text-prefix rule: see `ERASSB` for why this cannot take an
        // FC1 or UIC payload, and why a text payload is never taken for SSB.
        if ERASSB.isFrame(payload) {
            return .ssb(try SSBFrame(parsing: payload))
        }
        if let frame = ERASSB.base64Frame(payload) {
            return .ssb(try SSBFrame(parsing: frame))
        }
        // Two digits and printable text: no format above writes that (an SSB frame is binary or 152 base64
        // characters; FC1 text starts with its prefix), and the `XYZ:` rule below must not take an RSP6 header.
        if RSP6Barcode.isCandidate(payload) {
            return .rsp6(try RSP6Barcode(parsing: payload))
        }
        if let prefix = textPrefix(of: payload) {
            throw .unsupported(
                "the prefix \"\(prefix)\" is not an accepted ticket prefix (accepted: \(acceptedPrefixes.joined(separator: ", ")))"
            )
        }
        switch payload[0] {
        case 0xD2, 0x84:
            return .fc1(try COSESign1(decoding: payload), transport: .plain)
        default:
            break
        }
        if Zlib.looksLikeZlib(payload) {
            let cose = try Zlib.inflate(payload, limit: inflateLimit)
            guard let first = cose.first, first == 0xD2 || first == 0x84 else {
                throw .unsupported("the payload inflates to \(cose.count) bytes that are not a COSE_Sign1 message")
            }
            return .fc1(try COSESign1(decoding: cose), transport: .zlib)
        }
        throw .unsupported(
            "the payload (\(payload.count) bytes, starting \(payload.prefix(4).hexString)) is in no format farecheck knows"
        )
    }

    /// `XYZ:`-style prefix of a text payload (2–8 uppercase letters or digits, then a colon), if any.
    private func textPrefix(of payload: [UInt8]) -> String? {
        guard let colon = payload.prefix(9).firstIndex(of: UInt8(ascii: ":")), colon >= 2 else { return nil }
        let head = payload[..<colon]
        guard head.allSatisfy({ (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) }) else { return nil }
        return String(decoding: payload[...colon], as: UTF8.self)
    }
}
