import FareCore
import Foundation
import Signatures
import Symbols
import TicketFormats

/// Why a key file could not be read or written, or a ticket not signed: a sentence naming the file.
public struct IssuingError: Error, CustomStringConvertible, Sendable {
    /// The sentence.
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// A private key file for issuing: PKCS#8 PEM preceded by `# name: value` lines that say whose
/// key it is (OpenSSL ignores text before the PEM block, so the file stays a normal key file).
public struct IssuingKey: Sendable {
    /// The private key.
    public var privateKey: PrivateKey
    /// The issuer it signs for, when the file says.
    public var issuer: String?
    /// The FC1 key id (kid).
    public var keyID: [UInt8]
    /// The COSE algorithm it signs with.
    public var algorithm: COSEAlgorithm

    public init(privateKey: PrivateKey, issuer: String?, keyID: [UInt8], algorithm: COSEAlgorithm) {
        self.privateKey = privateKey
        self.issuer = issuer
        self.keyID = keyID
        self.algorithm = algorithm
    }

    /// The key kind an algorithm signs with.
    public static func kind(for algorithm: COSEAlgorithm) -> KeyKind {
        switch algorithm {
        case .es256: .ecP256
        case .edDSA: .ed25519
        case .ps256: .rsa(bits: 2048)
        }
    }

    /// The FC1 algorithm a key kind signs with, if any.
    public static func algorithm(for kind: KeyKind) -> COSEAlgorithm? {
        switch kind {
        case .ecP256: .es256
        case .ed25519: .edDSA
        case .rsa: .ps256
        default: nil
        }
    }

    /// The kid of a key without a certificate: SHA-256 over its SubjectPublicKeyInfo, first 8 bytes.
    public static func keyID(forSPKI spki: [UInt8]) -> [UInt8] {
        Array(digest(.sha256, spki).prefix(8))
    }

    /// Writes the key file (mode 0600).
    public func write(to path: String) throws(IssuingError) {
        var text = "# farecheck issuing key\n"
        if let issuer { text += "# issuer: \(issuer)\n" }
        text += "# kid: \(keyID.hexString)\n# alg: \(algorithm.name)\n"
        do {
            text += try privateKey.pemPKCS8
        } catch {
            throw IssuingError("the private key could not be encoded: \(error)")
        }
        guard
            FileManager.default.createFile(
                atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600])
        else {
            throw IssuingError("the file could not be written")
        }
    }

    /// Reads a key file written by `keys generate`, or any PKCS#8 / traditional PEM private key.
    public static func load(from path: String) throws(IssuingError) -> IssuingKey {
        guard FileManager.default.fileExists(atPath: path) else { throw IssuingError("\(path): no such file") }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw IssuingError("\(path): cannot be read")
        }
        return try parse(String(decoding: data, as: UTF8.self), source: path)
    }

    /// Reads the text of a key file; `source` names it in errors.
    public static func parse(_ text: String, source path: String) throws(IssuingError) -> IssuingKey {
        var fields: [String: String] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix("#") {
            let parts = line.dropFirst().split(separator: ":", maxSplits: 1)
            if parts.count == 2 {
                fields[parts[0].trimmingCharacters(in: .whitespaces)] = parts[1].trimmingCharacters(in: .whitespaces)
            }
        }
        let privateKey: PrivateKey
        do {
            privateKey = try PrivateKey(pem: text)
        } catch {
            throw IssuingError("\(path): not a private key file (\(error))")
        }
        guard let algorithm = fields["alg"].flatMap(COSEAlgorithm.init(name:)) ?? Self.algorithm(for: privateKey.kind)
        else {
            throw IssuingError("\(path): a \(privateKey.kind) key cannot sign FC1 tickets")
        }
        let keyID = fields["kid"].flatMap { [UInt8](hex: $0) } ?? keyID(forSPKI: privateKey.publicKey.spkiDER)
        return IssuingKey(privateKey: privateKey, issuer: fields["issuer"], keyID: keyID, algorithm: algorithm)
    }

    /// Signs a COSE Sig_structure with the scheme FC1 uses for this algorithm.
    public func sign(_ message: [UInt8]) throws -> [UInt8] {
        switch algorithm {
        case .es256: try privateKey.signature(for: message, scheme: .ecdsa(.sha256, .raw))
        case .edDSA: try privateKey.signature(for: message, scheme: .eddsa)
        case .ps256: try privateKey.signature(for: message, scheme: .rsaPSS(.sha256))
        }
    }
}

/// The barcode a ticket is rendered as.
public enum BarcodeKind: String, Sendable, CaseIterable {
    case qr, aztec

    /// The FC1 transport this barcode carries: text for QR's alphanumeric mode, zlib bytes for Aztec.
    public func transport(prefix: String) -> FC1.Transport {
        self == .qr ? .text(prefix: prefix) : .zlib
    }

    /// The payload as a barcode image.
    public func image(_ payload: [UInt8], moduleSize: Int) throws -> GrayImage {
        switch self {
        case .qr: try SymbolWriter(moduleSize: moduleSize).qrCode(payload)
        case .aztec: try SymbolWriter(moduleSize: moduleSize).aztecCode(payload)
        }
    }
}

extension IssuingKey {
    /// Signs the claims and wraps the COSE message for the barcode.
    public func payload(for claims: FC1.Claims, barcode: BarcodeKind, prefix: String = FC1.defaultPrefix) throws
        -> [UInt8]
    {
        let cose: [UInt8]
        do {
            cose = try COSESign1.sign(algorithm: algorithm, keyID: keyID, payload: claims.encoded(), sign: sign)
        } catch {
            throw IssuingError("signing failed: \(error)")
        }
        return FC1.encode(cose: cose, transport: barcode.transport(prefix: prefix))
    }
}
