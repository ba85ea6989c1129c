import Foundation

/// One public key an RSP6 issuer publishes: its RSA modulus and exponent.
public struct RSP6PublishedKey: Sendable, Hashable {
    /// The issuer id the key signs for (`TT`), as RSP6 texts carry it in characters 13–14.
    public var issuer: String
    /// The modulus n and the public exponent e, big-endian, as published.
    public var modulus: [UInt8]
    public var exponent: [UInt8]

    public init(issuer: String, modulus: [UInt8], exponent: [UInt8]) {
        self.issuer = issuer
        self.modulus = modulus
        self.exponent = exponent
    }
}

/// The files RSP6 issuers' public keys are published in: a JSON array of `{"n": base64, "e": base64}` per issuer
/// (the issuer named by the file, `TT.json`), or one JSON object keyed by issuer id whose values are such arrays.
public enum RSP6KeyFile {
    /// Whether `text` is an issuer id as RSP6 texts carry it: two characters, `A`–`Z` or `0`–`9`.
    public static func isIssuerID(_ text: String) -> Bool {
        text.utf8.count == 2
            && text.utf8.allSatisfy { (0x41...0x5A).contains($0) || (0x30...0x39).contains($0) }
    }

    /// The issuer id a per-issuer file's name gives (`TT.json`, `keys/tt.json` → `TT`), or `nil`.
    public static func issuer(fromFileName name: String) -> String? {
        let stem = ((name as NSString).lastPathComponent as NSString).deletingPathExtension.uppercased()
        return isIssuerID(stem) ? stem : nil
    }

    /// The keys in `json`.
    ///
    /// - Parameter issuer: the issuer of a per-issuer array (required for one); with a file keyed by issuer, only
    ///   that issuer's keys are taken (`nil`: every issuer's).
    /// - Throws: `malformed`, naming the issuer and the entry, when the file is not JSON of either shape, an issuer
    ///   id is not two letters or digits, or an entry lacks `n` or `e` in base64; `malformed` too for an array
    ///   without `issuer`, and for a keyed file that has no keys of `issuer`.
    public static func keys(parsing json: [UInt8], issuer: String?) throws(FormatError) -> [RSP6PublishedKey] {
        let document: Any
        do {
            document = try JSONSerialization.jsonObject(with: Data(json))
        } catch {
            throw .malformed("the RSP6 key file is not JSON: \(error.localizedDescription)")
        }
        if let issuer, !isIssuerID(issuer) {
            throw .malformed("the issuer id \"\(issuer)\" is not two letters or digits, as RSP6 tickets write it")
        }
        if let entries = document as? [Any] {
            guard let issuer else {
                throw .malformed(
                    "the RSP6 key file is one issuer's array of keys: name the issuer (an id such as TT, or the "
                        + "file TT.json)")
            }
            return try keys(entries, issuer: issuer)
        }
        guard let byIssuer = document as? [String: Any] else {
            throw .malformed(
                "the RSP6 key file is neither an array of {\"n\", \"e\"} keys nor an object keyed by issuer id")
        }
        var keys: [RSP6PublishedKey] = []
        for name in byIssuer.keys.sorted() where issuer == nil || name.uppercased() == issuer {
            guard isIssuerID(name.uppercased()) else {
                throw .malformed("the RSP6 key file names issuer \"\(name)\"; an issuer id is two letters or digits")
            }
            guard let entries = byIssuer[name] as? [Any] else {
                throw .malformed("issuer \(name)'s keys in the RSP6 key file are not an array")
            }
            keys += try Self.keys(entries, issuer: name.uppercased())
        }
        if let issuer, keys.isEmpty {
            throw .malformed("the RSP6 key file holds no keys of issuer \(issuer)")
        }
        return keys
    }

    /// The entries of one issuer's array.
    private static func keys(_ entries: [Any], issuer: String) throws(FormatError) -> [RSP6PublishedKey] {
        var keys: [RSP6PublishedKey] = []
        for (index, entry) in entries.enumerated() {
            guard let object = entry as? [String: Any] else {
                throw .malformed("key \(index + 1) of issuer \(issuer) is not an object with \"n\" and \"e\"")
            }
            func number(_ name: String) throws(FormatError) -> [UInt8] {
                guard let text = object[name] as? String, let data = Data(base64Encoded: text), !data.isEmpty else {
                    throw .malformed("key \(index + 1) of issuer \(issuer) has no \"\(name)\" in base64")
                }
                return Array(data)
            }
            keys.append(RSP6PublishedKey(issuer: issuer, modulus: try number("n"), exponent: try number("e")))
        }
        return keys
    }
}
