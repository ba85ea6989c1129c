import FareCore

/// A VDV-KA static barcode (the Deutschland-Ticket of VRR and other German transport associations)
/// taken apart: the signature hiding the ticket data, the part in clear, the issuer's certificate
/// and the CA that signed it. Nothing is verified yet: that needs the CA's key (`Verification`).
///
/// Layout (all BER-TLV): `9E` signature (as long as the issuer's modulus), `9A` remainder,
/// `7F21` issuer certificate (`5F37` + `5F38`), `42` CA reference (8 bytes).
public struct VDVBarcode: Sendable, Hashable {

    /// The ISO 9796-2 signature over the ticket data (tag `9E`).
    public var signature: [UInt8]
    /// The ticket data that did not fit into the signature (tag `9A`).
    public var remainder: [UInt8]
    /// The issuer's certificate.
    public var certificate: VDVCertificateEnvelope
    /// The whole `7F21` element as carried: what a verifier caches the recovered certificate by.
    public var certificateBytes: [UInt8]
    /// The CA whose key signed the issuer certificate (tag `42`).
    public var caReference: VDVCAReference

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

    /// Takes a barcode apart.
    ///
    /// - Throws: `FormatError.malformed` naming the offset for broken TLVs, missing, extra or
    ///   misplaced elements, or a CA reference that is not 8 bytes; `.unsupported` for the
    ///   several-authorisations variant and for an issuer certificate in clear.
    public init(parsing payload: [UInt8]) throws(FormatError) {
        if Self.isMultipleAuthorizationBarcode(payload) {
            throw .unsupported("the VDV barcode holds several authorisations (tag EF), which farecheck does not read")
        }
        let elements = try BERTLV.elements(in: payload, context: "the VDV barcode")
        let expected = [VDVTag.ticketSignature, VDVTag.ticketRemainder, VDVTag.certificate, VDVTag.caReference]
        for (index, tag) in expected.enumerated() {
            guard index < elements.count else {
                throw .malformed(
                    "the VDV barcode ends at byte \(payload.count) before its \(tag.hexString.uppercased()) element")
            }
            guard elements[index].tag == tag else {
                throw .malformed(
                    "the VDV barcode has \(elements[index].tagHex) at byte \(elements[index].offset) where \(tag.hexString.uppercased()) belongs"
                )
            }
        }
        guard elements.count == expected.count else {
            let extra = elements[expected.count]
            throw .malformed("the VDV barcode has an unexpected \(extra.tagHex) element at byte \(extra.offset)")
        }
        let signature = elements[0]
        guard !signature.value.isEmpty else {
            throw .malformed("the signature (9E) at byte \(signature.offset) is empty")
        }
        guard !elements[1].value.isEmpty else {
            throw .malformed(
                "the remainder (9A) at byte \(elements[1].offset) is empty; VDV ticket data never fits the signature")
        }
        let reference = elements[3]
        guard let caReference = VDVCAReference(reference.value) else {
            throw .malformed(
                "the CA reference (42) at byte \(reference.offset) has \(reference.value.count) bytes instead of 8")
        }
        self.signature = signature.value
        self.remainder = elements[1].value
        self.certificate = try VDVCertificateEnvelope(elements[2], in: payload, context: "the issuer certificate")
        self.certificateBytes = Array(payload[elements[2].offset..<elements[2].end])
        self.caReference = caReference
        guard case .recoverable = certificate else {
            throw .unsupported(
                "the issuer certificate at byte \(elements[2].offset) is in clear (5F4E); farecheck reads it only inside a signature (5F37 + 5F38)"
            )
        }
    }
}
