import FareCore

/// A VDV-KA static barcode (the Deutschland-Ticket of VRR and other German transport associations)
/// taken apart: the signature hiding the ticket data, the part in clear, the issuer's certificate
/// and the CA that signed it. Nothing is verified yet: that needs the CA's key (`Verification`).
///
/// Layout (all BER-TLV): `9E` signature (as long as the issuer's modulus), `9A` remainder,
/// `7F21` issuer certificate (`5F37` + `5F38`), `42` CA reference (8 bytes).
public struct VDVBarcode: Sendable, Hashable {
    /// The barcode's bytes as read; the parts below are positions in it (taking a barcode apart copies nothing).
    public let payload: [UInt8]
    /// Where the signature's value lies in `payload`.
    package let signatureRange: Range<Int>
    /// Where the remainder's value lies.
    package let remainderRange: Range<Int>
    /// Where the whole `7F21` element lies.
    package let certificateRange: Range<Int>
    /// Where the certificate's signature (`5F37`) and remainder (`5F38`) values lie.
    package let certificateSignatureRange: Range<Int>
    package let certificateRemainderRange: Range<Int>
    /// The CA whose key signed the issuer certificate (tag `42`).
    public let caReference: VDVCAReference

    /// The ISO 9796-2 signature over the ticket data (tag `9E`).
    public var signature: [UInt8] { Array(payload[signatureRange]) }
    /// The ticket data that did not fit into the signature (tag `9A`).
    public var remainder: [UInt8] { Array(payload[remainderRange]) }
    /// The issuer's certificate.
    public var certificate: VDVCertificateEnvelope {
        .recoverable(
            signature: Array(payload[certificateSignatureRange]), remainder: Array(payload[certificateRemainderRange]))
    }
    /// The whole `7F21` element as carried: what a verifier caches the recovered certificate by.
    public var certificateBytes: [UInt8] { Array(payload[certificateRange]) }

    /// Whether `payload` starts like a VDV-KA barcode (a `9E` element), so that the detector hands it
    /// here and nowhere else. FC1 (`D2`, `84`, zlib `78`, text prefixes) and UIC (`#UT`, `OTI`) never start so.
    public static func isBarcode(_ payload: [UInt8]) -> Bool {
        payload.first == 0x9E
    }

    /// Whether `payload` starts like the several-authorisations variant (`EF` holding a `90` count).
    public static func isMultipleAuthorizationBarcode(_ payload: [UInt8]) -> Bool {
        guard payload.count > 4, payload[0] == 0xEF else { return false }
        let contentStart = payload[1] == 0x81 ? 3 : payload[1] == 0x82 ? 4 : 2
        return payload.count > contentStart && payload[contentStart] == 0x90
    }

    /// The top-level elements, in order.
    private static let expectedTags: [UInt32] = [
        VDVTag.ticketSignature, VDVTag.ticketRemainder, VDVTag.certificate, VDVTag.caReference,
    ].map(BERTLVSpan.packed)

    /// Takes a barcode apart.
    ///
    /// - Throws: `FormatError.malformed` naming the offset for broken TLVs, missing, extra or
    ///   misplaced elements, or a CA reference that is not 8 bytes; `.unsupported` for the
    ///   several-authorisations variant and for an issuer certificate in clear.
    public init(parsing payload: [UInt8]) throws(FormatError) {
        if Self.isMultipleAuthorizationBarcode(payload) {
            throw .unsupported("the VDV barcode holds several authorisations (tag EF), which farecheck does not read")
        }
        let context = "the VDV barcode"
        var spans: [BERTLVSpan] = []
        spans.reserveCapacity(4)
        var position = 0
        for expected in Self.expectedTags {
            guard position < payload.count else {
                throw .malformed(
                    "the VDV barcode ends at byte \(payload.count) before its \(String(expected, radix: 16, uppercase: true)) element"
                )
            }
            let span = try BERTLVSpan(in: payload, at: position, end: payload.count, context: context)
            guard span.tag == expected else {
                throw .malformed(
                    "the VDV barcode has \(span.tagHex) at byte \(span.offset) where \(String(expected, radix: 16, uppercase: true)) belongs"
                )
            }
            position = span.end
            spans.append(span)
        }
        if position < payload.count {
            // Read the extra element first, so that a broken one is reported as broken.
            let extra = try BERTLVSpan(in: payload, at: position, end: payload.count, context: context)
            throw .malformed("the VDV barcode has an unexpected \(extra.tagHex) element at byte \(extra.offset)")
        }
        let (signature, remainder, certificate, reference) = (spans[0], spans[1], spans[2], spans[3])
        guard signature.count > 0 else {
            throw .malformed("the signature (9E) at byte \(signature.offset) is empty")
        }
        guard remainder.count > 0 else {
            throw .malformed(
                "the remainder (9A) at byte \(remainder.offset) is empty; VDV ticket data never fits the signature")
        }
        guard let caReference = VDVCAReference(payload[reference.valueRange]) else {
            throw .malformed(
                "the CA reference (42) at byte \(reference.offset) has \(reference.count) bytes instead of 8")
        }
        let parts = try VDVCertificateEnvelope.Parts(certificate, in: payload, context: "the issuer certificate")
        guard case .recoverable(let certificateSignature, let certificateRemainder) = parts else {
            throw .unsupported(
                "the issuer certificate at byte \(certificate.offset) is in clear (5F4E); farecheck reads it only inside a signature (5F37 + 5F38)"
            )
        }
        self.payload = payload
        self.signatureRange = signature.valueRange
        self.remainderRange = remainder.valueRange
        self.certificateRange = certificate.elementRange
        self.certificateSignatureRange = certificateSignature
        self.certificateRemainderRange = certificateRemainder
        self.caReference = caReference
    }
}
