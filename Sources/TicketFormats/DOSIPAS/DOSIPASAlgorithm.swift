/// A hash named by a DOSIPAS algorithm identifier.
///
/// farecheck's own small enum, like `UICHash`: `TicketFormats` names what the barcode says, the verifier maps
/// it onto its signature module.
public enum DOSIPASHash: String, Sendable, Hashable, CaseIterable {
    case sha1, sha224, sha256, sha384, sha512
}

/// A signing algorithm named by `level1SigningAlg` / `level2SigningAlg` (an OBJECT IDENTIFIER).
public enum DOSIPASSigningAlgorithm: Sendable, Hashable, CustomStringConvertible {
    /// ECDSA with a hash: 1.2.840.10045.4.3.2 (SHA-256), .3 (SHA-384), .4 (SHA-512).
    case ecdsa(DOSIPASHash)
    /// DSA with a hash: 2.16.840.1.101.3.4.3.1 (SHA-224), .2 (SHA-256); 1.2.840.10040.4.3 (SHA-1).
    case dsa(DOSIPASHash)
    /// Ed25519: 1.3.101.112.
    case ed25519
    /// RSA PKCS#1 v1.5 with SHA-256: 1.2.840.113549.1.1.11 (named by some decoders, never seen in a barcode).
    case rsaPKCS1(DOSIPASHash)
    /// Any other identifier, in dotted form.
    case other(String)

    /// The algorithm an OBJECT IDENTIFIER in dotted form names.
    public init(oid: String) {
        switch oid {
        case "1.2.840.10045.4.3.2": self = .ecdsa(.sha256)
        case "1.2.840.10045.4.3.3": self = .ecdsa(.sha384)
        case "1.2.840.10045.4.3.4": self = .ecdsa(.sha512)
        case "2.16.840.1.101.3.4.3.1": self = .dsa(.sha224)
        case "2.16.840.1.101.3.4.3.2": self = .dsa(.sha256)
        case "1.2.840.10040.4.3": self = .dsa(.sha1)
        case "1.3.101.112": self = .ed25519
        case "1.2.840.113549.1.1.11": self = .rsaPKCS1(.sha256)
        default: self = .other(oid)
        }
    }

    /// The algorithm an OBJECT IDENTIFIER names, from its arcs as decoded: the same as `init(oid:)` with the
    /// dotted form, which is only written out for an identifier that is not known.
    init(arcs: [Int]) {
        self = Self.known.first { $0.arcs == arcs }?.algorithm ?? .other(DOSIPASObjectIdentifier.dotted(arcs))
    }

    /// The identifiers `init(oid:)` knows, as arcs (made once: an array literal in a `case` pattern is built for
    /// every comparison).
    private static let known: [(arcs: [Int], algorithm: DOSIPASSigningAlgorithm)] = [
        ([1, 2, 840, 10045, 4, 3, 2], .ecdsa(.sha256)),
        ([1, 2, 840, 10045, 4, 3, 3], .ecdsa(.sha384)),
        ([1, 2, 840, 10045, 4, 3, 4], .ecdsa(.sha512)),
        ([2, 16, 840, 1, 101, 3, 4, 3, 1], .dsa(.sha224)),
        ([2, 16, 840, 1, 101, 3, 4, 3, 2], .dsa(.sha256)),
        ([1, 2, 840, 10040, 4, 3], .dsa(.sha1)),
        ([1, 3, 101, 112], .ed25519),
        ([1, 2, 840, 113549, 1, 1, 11], .rsaPKCS1(.sha256)),
    ]

    /// E.g. `ECDSA with SHA-256`, or the identifier when unknown.
    public var description: String {
        // Whole literals: the verifier names the algorithm for every DOSIPAS barcode it checks.
        switch self {
        case .ecdsa(.sha1): "ECDSA with SHA-1"
        case .ecdsa(.sha224): "ECDSA with SHA-224"
        case .ecdsa(.sha256): "ECDSA with SHA-256"
        case .ecdsa(.sha384): "ECDSA with SHA-384"
        case .ecdsa(.sha512): "ECDSA with SHA-512"
        case .dsa(.sha1): "DSA with SHA-1"
        case .dsa(.sha224): "DSA with SHA-224"
        case .dsa(.sha256): "DSA with SHA-256"
        case .dsa(.sha384): "DSA with SHA-384"
        case .dsa(.sha512): "DSA with SHA-512"
        case .ed25519: "Ed25519"
        case .rsaPKCS1(let hash): "RSA PKCS#1 with " + hash.displayName
        case .other(let oid): "algorithm \(oid)"
        }
    }
}

/// A key algorithm named by `level1KeyAlg` / `level2KeyAlg` (an OBJECT IDENTIFIER).
public enum DOSIPASKeyAlgorithm: Sendable, Hashable, CustomStringConvertible {
    /// EC on NIST P-256: 1.2.840.10045.3.1.7.
    case ecP256
    /// EC on NIST P-384: 1.3.132.0.34.
    case ecP384
    /// EC on NIST P-521: 1.3.132.0.35.
    case ecP521
    /// `id-ecPublicKey` (1.2.840.10045.2.1) without a curve.
    case ecPublicKey
    /// DSA: 1.2.840.10040.4.1.
    case dsa
    /// RSA: 1.2.840.113549.1.1.1.
    case rsa
    /// Ed25519: 1.3.101.112.
    case ed25519
    /// Any other identifier, in dotted form.
    case other(String)

    /// The algorithm an OBJECT IDENTIFIER in dotted form names.
    public init(oid: String) {
        switch oid {
        case "1.2.840.10045.3.1.7": self = .ecP256
        case "1.3.132.0.34": self = .ecP384
        case "1.3.132.0.35": self = .ecP521
        case "1.2.840.10045.2.1": self = .ecPublicKey
        case "1.2.840.10040.4.1": self = .dsa
        case "1.2.840.113549.1.1.1": self = .rsa
        case "1.3.101.112": self = .ed25519
        default: self = .other(oid)
        }
    }

    /// The algorithm an OBJECT IDENTIFIER names, from its arcs as decoded (see
    /// `DOSIPASSigningAlgorithm.init(arcs:)`).
    init(arcs: [Int]) {
        self = Self.known.first { $0.arcs == arcs }?.algorithm ?? .other(DOSIPASObjectIdentifier.dotted(arcs))
    }

    /// The identifiers `init(oid:)` knows, as arcs.
    private static let known: [(arcs: [Int], algorithm: DOSIPASKeyAlgorithm)] = [
        ([1, 2, 840, 10045, 3, 1, 7], .ecP256),
        ([1, 3, 132, 0, 34], .ecP384),
        ([1, 3, 132, 0, 35], .ecP521),
        ([1, 2, 840, 10045, 2, 1], .ecPublicKey),
        ([1, 2, 840, 10040, 4, 1], .dsa),
        ([1, 2, 840, 113549, 1, 1, 1], .rsa),
        ([1, 3, 101, 112], .ed25519),
    ]

    /// E.g. `EC P-256`.
    public var description: String {
        switch self {
        case .ecP256: "EC P-256"
        case .ecP384: "EC P-384"
        case .ecP521: "EC P-521"
        case .ecPublicKey: "EC (curve not named)"
        case .dsa: "DSA"
        case .rsa: "RSA"
        case .ed25519: "Ed25519"
        case .other(let oid): "key algorithm \(oid)"
        }
    }
}

extension DOSIPASHash {
    /// `SHA-256`: the name people read.
    var displayName: String {
        switch self {
        case .sha1: "SHA-1"
        case .sha224: "SHA-224"
        case .sha256: "SHA-256"
        case .sha384: "SHA-384"
        case .sha512: "SHA-512"
        }
    }
}

/// OBJECT IDENTIFIER arcs as text.
enum DOSIPASObjectIdentifier {
    /// `1.2.840.10045.4.3.2`, as `PERValue.objectIdentifier` writes it.
    static func dotted(_ arcs: [Int]) -> String {
        arcs.map(String.init).joined(separator: ".")
    }
}
