import Foundation
import Signatures

/// A payload signed by a trust anchor, as the API carries key bundles and revocation deltas.
///
/// On the wire: `{ "anchor": "<anchor key id>", "algorithm": "ES256", "payload": "<base64>",
/// "signature": "<base64>" }`. The signature is over the payload bytes exactly as carried, so no
/// canonical JSON is needed: the receiver checks the bytes, then decodes them.
public struct SignedDocument: Sendable, Equatable, Codable {
    /// The key id of the anchor that signed (see `TrustAnchor.id`).
    public var anchor: String
    /// The signature algorithm; only `ES256` is accepted.
    public var algorithm: String
    /// The signed bytes: a JSON `KeyBundle` or `RevocationDelta`.
    public var payload: [UInt8]
    /// ECDSA P-256 with SHA-256 over `payload`, raw `r ‖ s` (64 bytes), as in COSE ES256.
    public var signature: [UInt8]

    /// The only signature algorithm of the API.
    public static let es256 = "ES256"

    /// Makes a document from its parts (nothing is checked; see `open(as:trusting:)`).
    public init(anchor: String, algorithm: String, payload: [UInt8], signature: [UInt8]) {
        self.anchor = anchor
        self.algorithm = algorithm
        self.payload = payload
        self.signature = signature
    }

    /// Signs payload bytes with an anchor's private key.
    ///
    /// - Parameters:
    ///   - payload: The exact bytes to carry and sign.
    ///   - privateKey: The anchor's ECDSA P-256 private key.
    ///   - anchorID: The anchor's key id; by default the id of the private key's public half.
    /// - Throws: `BundleError` with code `.signingFailed` for a key that is not P-256 or when OpenSSL fails.
    public static func sign(
        payload: [UInt8], with privateKey: PrivateKey, anchorID: String? = nil
    ) throws(BundleError) -> SignedDocument {
        guard privateKey.kind == .ecP256 else {
            throw BundleError(
                code: .signingFailed,
                message: "An anchor key signs with ES256 and must be ECDSA P-256, not \(privateKey.kind)."
            )
        }
        let signature: [UInt8]
        do {
            signature = try privateKey.signature(for: payload, scheme: .es256)
        } catch {
            throw BundleError(code: .signingFailed, message: "The payload could not be signed.", cause: error)
        }
        return SignedDocument(
            anchor: anchorID ?? TrustAnchor.id(of: privateKey.publicKey), algorithm: es256, payload: payload,
            signature: signature)
    }

    /// Encodes a value with the API's JSON conventions and signs the resulting bytes.
    ///
    /// - Throws: `BundleError` with code `.signingFailed` when the value cannot be encoded or signed.
    public static func sign(
        _ value: some Encodable, with privateKey: PrivateKey, anchorID: String? = nil
    ) throws(BundleError) -> SignedDocument {
        let payload: [UInt8]
        do {
            payload = try WireFormat.encode(value)
        } catch {
            throw BundleError(code: .signingFailed, message: "The document could not be encoded.", cause: error)
        }
        return try sign(payload: payload, with: privateKey, anchorID: anchorID)
    }

    /// Reads a signed document from the bytes of an HTTP response body.
    ///
    /// Read with `JSONReader`, not `JSONDecoder`: a revocation page's payload is megabytes of base64.
    /// Unknown members are skipped; a member named twice is refused.
    ///
    /// - Throws: `BundleError` with code `.malformedDocument` when the bytes are not the JSON envelope.
    public init(jsonBytes bytes: [UInt8]) throws(BundleError) {
        do {
            self = try bytes.withUnsafeBufferPointer { (buffer) throws(JSONReadError) -> SignedDocument in
                var reader = JSONReader(buffer)
                var anchor: String?
                var algorithm: String?
                var payload: [UInt8]?
                var signature: [UInt8]?
                try reader.readObject(fields: ["anchor", "algorithm", "payload", "signature"]) {
                    (field, reader) throws(JSONReadError) in
                    switch field {
                    case 0: anchor = try reader.readString()
                    case 1: algorithm = try reader.readString()
                    case 2: payload = try reader.readBase64()
                    default: signature = try reader.readBase64()
                    }
                }
                try reader.expectEnd()
                guard let anchor, let algorithm, let payload, let signature else {
                    throw JSONReadError("a signed document needs anchor, algorithm, payload and signature", at: 0)
                }
                return SignedDocument(anchor: anchor, algorithm: algorithm, payload: payload, signature: signature)
            }
        } catch {
            throw BundleError(
                code: .malformedDocument,
                message: "The response is not a signed document (JSON with anchor, algorithm, payload, signature): "
                    + "\(error).",
                cause: error)
        }
    }

    /// The envelope as JSON bytes, as the server sends it.
    public func jsonBytes() -> [UInt8] {
        // Strings and base64 text always encode.
        (try? WireFormat.encode(self)) ?? []
    }

    /// Checks the signature with the pinned anchors and returns the payload bytes.
    ///
    /// - Parameter anchors: The anchors the validator pins.
    /// - Throws: `BundleError` with code `.unknownAnchor` when no pinned anchor has the document's anchor id,
    ///   `.unsupportedAlgorithm` for any algorithm but ES256, `.badSignature` when the signature does not verify.
    public func verifiedPayload(trusting anchors: [TrustAnchor]) throws(BundleError) -> [UInt8] {
        guard let trusted = anchors.first(where: { $0.id == anchor }) else {
            let pinned = anchors.isEmpty ? "none" : anchors.map(\.id).joined(separator: ", ")
            throw BundleError(
                code: .unknownAnchor,
                message: "The document is signed by anchor \(anchor), which this validator does not pin "
                    + "(pinned: \(pinned)); refused. Pin the agency's anchor, or point sync at the right server."
            )
        }
        guard algorithm == Self.es256 else {
            throw BundleError(
                code: .unsupportedAlgorithm,
                message: "The document is signed with \(algorithm); only \(Self.es256) is accepted; refused."
            )
        }
        guard trusted.publicKey.isValidSignature(signature, for: payload, scheme: .es256) else {
            throw BundleError(
                code: .badSignature,
                message: "The signature of anchor \(anchor) does not verify over the payload: the document was "
                    + "altered or forged; refused."
            )
        }
        return payload
    }

    /// Checks the signature with the pinned anchors, then decodes the payload.
    ///
    /// - Parameters:
    ///   - type: The payload's type, `KeyBundle` or `RevocationDelta`.
    ///   - anchors: The anchors the validator pins.
    /// - Throws: `BundleError` as `verifiedPayload(trusting:)` does, and `.undecodablePayload` when the signed
    ///   bytes are not a `type` document.
    public func open<T: Decodable>(as type: T.Type, trusting anchors: [TrustAnchor]) throws(BundleError) -> T {
        let bytes = try verifiedPayload(trusting: anchors)
        do {
            return try WireFormat.decode(type, from: bytes)
        } catch {
            throw BundleError(
                code: .undecodablePayload,
                message: "The signed payload is not a \(T.self) document; refused.",
                cause: error)
        }
    }

    /// Checks the signature with the pinned anchors, then reads the payload as a revocation delta with
    /// `RevocationDelta(wireBytes:)`, much faster than `open(as:trusting:)` for a page of many entries.
    ///
    /// - Throws: `BundleError` as `verifiedPayload(trusting:)` does, and `.undecodablePayload` when the signed
    ///   bytes are not a revocation delta.
    public func openRevocationDelta(trusting anchors: [TrustAnchor]) throws(BundleError) -> RevocationDelta {
        let bytes = try verifiedPayload(trusting: anchors)
        do {
            return try RevocationDelta(wireBytes: bytes)
        } catch {
            throw BundleError(
                code: .undecodablePayload,
                message: "The signed payload is not a RevocationDelta document (\(error)); refused.",
                cause: error)
        }
    }

    private enum CodingKeys: String, CodingKey {
        case anchor, algorithm, payload, signature
    }

    /// Reads the envelope; payload and signature are base64.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        anchor = try container.decode(String.self, forKey: .anchor)
        algorithm = try container.decode(String.self, forKey: .algorithm)
        payload = try container.decodeBase64(forKey: .payload)
        signature = try container.decodeBase64(forKey: .signature)
    }

    /// Writes the envelope; payload and signature as base64.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(anchor, forKey: .anchor)
        try container.encode(algorithm, forKey: .algorithm)
        try container.encodeBase64(payload, forKey: .payload)
        try container.encodeBase64(signature, forKey: .signature)
    }
}
