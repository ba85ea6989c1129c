import FareCore
import Signatures

/// An agency's trust anchor: the ES256 (ECDSA P-256) public key whose signature a validator requires
/// on every key bundle and revocation delta before it changes its store.
///
/// Validators pin their anchors (the demo anchor ships in `Keys/demo-anchor.pub.pem` and as
/// `TrustAnchor.demo`); a document signed by any other key is refused.
public struct TrustAnchor: Sendable, Hashable, CustomStringConvertible {
    /// The anchor's key id: the first 8 bytes of SHA-256 over the key's DER SubjectPublicKeyInfo, in hex,
    /// the same convention as `farecheck keys generate`.
    public let id: String
    /// The anchor's public key, always ECDSA P-256.
    public let publicKey: PublicKey

    /// Makes an anchor of a public key.
    ///
    /// - Throws: `BundleError` with code `.unsupportedAlgorithm` when the key is not ECDSA P-256.
    public init(publicKey: PublicKey) throws(BundleError) {
        guard publicKey.kind == .ecP256 else {
            throw BundleError(
                code: .unsupportedAlgorithm,
                message: "A trust anchor signs with ES256 and must be an ECDSA P-256 key, not \(publicKey.kind)."
            )
        }
        self.publicKey = publicKey
        self.id = Self.id(of: publicKey)
    }

    /// Reads an anchor from a PEM `PUBLIC KEY` block, the form of `Keys/demo-anchor.pub.pem`.
    ///
    /// - Throws: `BundleError` with code `.malformedDocument` when the text holds no public key,
    ///   `.unsupportedAlgorithm` when the key is not ECDSA P-256.
    public init(pem: String) throws(BundleError) {
        let key: PublicKey
        do {
            key = try PublicKey(pem: pem)
        } catch {
            throw BundleError(
                code: .malformedDocument, message: "The trust anchor is not a PEM public key: \(error.message)",
                cause: error)
        }
        try self.init(publicKey: key)
    }

    /// The key id of any public key by the anchor convention: SHA-256 over its SPKI DER, first 8 bytes, hex.
    public static func id(of publicKey: PublicKey) -> String {
        digest(.sha256, publicKey.spkiDER).prefix(8).hexString
    }

    /// The anchor's id, e.g. `TrustAnchor(520513aeec6a021c)`.
    public var description: String { "TrustAnchor(\(id))" }

    /// The published demo anchor (`Keys/demo-anchor.pub.pem`). Anyone holds its private key: trust it
    /// only on validators that check demo tickets.
    public static let demo: TrustAnchor = {
        do {
            return try TrustAnchor(pem: DemoAnchor.publicKeyPEM)
        } catch {
            // The text is a constant checked by a test against Keys/; it cannot fail at run time.
            fatalError("The embedded demo anchor does not parse: \(error)")
        }
    }()
}
