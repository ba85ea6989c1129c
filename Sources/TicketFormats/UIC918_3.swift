import FareCore

/// UIC 918.3 static barcodes: the `#UT` container of European rail tickets (Deutsche Bahn and others).
///
/// `UICContainer` takes a barcode apart, `UICHead`, `UICLayout` and `UIC0080BL` decode the records
/// farecheck understands, `ticket(from:)` maps them onto a `Ticket`, and `encode` builds containers for
/// tests and benchmarks.
public enum UIC918_3 {
    /// The first bytes of every container.
    public static let magic: [UInt8] = Array("#UT".utf8)

    /// Whether `payload` starts like a UIC 918.3 container (`#UT`); it may still be malformed.
    public static func isContainer(_ payload: [UInt8]) -> Bool {
        payload.starts(with: magic)
    }

    /// Builds a container from records: concatenates them and hands over to `encode(inflated:…)`.
    public static func encode(
        records: [UICRecord], version: Int = 1, issuerCode: String, keyID: String,
        signatureForm: UICSignatureForm? = nil, signatureFieldLength: Int? = nil,
        signer: ([UInt8]) throws -> [UInt8]
    ) rethrows -> [UInt8] {
        try encode(
            inflated: records.flatMap { $0.encoded() }, version: version, issuerCode: issuerCode, keyID: keyID,
            signatureForm: signatureForm, signatureFieldLength: signatureFieldLength, signer: signer
        )
    }

    /// Builds a container: compresses `inflated` (zlib), has `signer` sign the compressed bytes, and lays
    /// out header, signature field, length and data. For tests and benchmarks.
    ///
    /// The signer may return a DER signature or `r ‖ s`; the builder writes what the layout asks for:
    /// - version 1: DER, zero-padded to the 50-byte field;
    /// - version 2 (default form `.raw`): 64 raw bytes (a DER signature is converted, 32 bytes a half);
    /// - version 2 with `signatureForm: .der`: DER zero-padded to the 64-byte field, or with
    ///   `signatureFieldLength: 50` to a 50-byte field laid out like version 1 — the two ways some
    ///   issuers put DER into version 2 tickets.
    ///
    /// - Precondition: `version` is 1 or 2, `issuerCode` has 4 and `keyID` 5 ASCII characters, the
    ///   compressed data is shorter than 10 000 bytes and the signature fits its field.
    public static func encode(
        inflated: [UInt8], version: Int = 1, issuerCode: String, keyID: String,
        signatureForm: UICSignatureForm? = nil, signatureFieldLength: Int? = nil,
        signer: ([UInt8]) throws -> [UInt8]
    ) rethrows -> [UInt8] {
        precondition(version == 1 || version == 2, "UIC 918.3 containers have version 1 or 2")
        precondition(
            issuerCode.utf8.count == 4 && UICFieldCursor.isPrintableASCII(issuerCode.utf8), "4-character issuer")
        precondition(keyID.utf8.count == 5 && UICFieldCursor.isPrintableASCII(keyID.utf8), "5-character key id")
        let form = signatureForm ?? (version == 1 ? .der : .raw)
        let fieldLength = signatureFieldLength ?? (version == 1 ? 50 : 64)
        precondition(version == 2 || (form == .der && fieldLength == 50), "version 1 has a 50-byte DER field")
        precondition(fieldLength == 64 || (fieldLength == 50 && form == .der), "a 50-byte field holds DER")

        let compressed = Zlib.deflate(inflated)
        precondition(compressed.count <= 9_999, "the compressed data must fit a 4-digit length")
        let produced = try signer(compressed)
        let isDER = UICSignatureField.parse(produced[...]).map { $0.end == produced.count } ?? false

        var field: [UInt8]
        switch form {
        case .der:
            if isDER {
                field = produced
            } else {
                let half = produced.count / 2
                field = UICSignatureField.der(r: produced[..<half], s: produced[half...])
            }
            precondition(
                field.count <= fieldLength, "a \(field.count)-byte DER signature does not fit \(fieldLength) bytes")
            field += [UInt8](repeating: 0, count: fieldLength - field.count)
        case .raw:
            if isDER {
                guard let raw = UICSignatureField.raw(fromDER: produced, width: 32) else {
                    preconditionFailure("the DER signature's integers do not fit 32 bytes each")
                }
                field = raw
            } else {
                field = produced
            }
            precondition(field.count == 64, "a raw version 2 signature has 64 bytes, not \(field.count)")
        }

        return magic + uicDigits(version, width: 2) + Array(issuerCode.utf8) + Array(keyID.utf8) + field
            + uicDigits(compressed.count, width: 4) + compressed
    }
}
