import Foundation
import Signatures

extension RSP6TestIssuer {
    /// The issuer's public key as a PEM `PUBLIC KEY` (SubjectPublicKeyInfo), as the key list's `public_key_x509`
    /// gives one.
    public var publicKeyPEM: String {
        let spki = try! RSARawPublicKey(modulus: key.modulus, exponent: key.exponent).publicKey().spkiDER
        let base64 = Data(spki).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
        return "-----BEGIN PUBLIC KEY-----\n\(base64)\n-----END PUBLIC KEY-----\n"
    }

    /// An entry of the key list the open decoders share, for this issuer's key, as JSON text:
    /// `{"issuer_id", "modulus_hex", "public_exponent_hex", "valid_from", "valid_until", "is_test", "is_private",
    /// "public_key_x509"}`.
    ///
    /// - Parameters:
    ///   - validFrom, validUntil: the dates as the list writes them (`2025-01-01 00:00:00`), or `nil` for JSON null.
    ///   - numbers: whether the entry gives `modulus_hex` and `public_exponent_hex` (null otherwise).
    ///   - x509: whether it gives `public_key_x509` (null otherwise).
    ///   - uppercase: hex in upper case.
    public func listEntry(
        validFrom: String? = "2020-01-01 00:00:00", validUntil: String? = "2030-12-31 23:59:59", isTest: Bool = false,
        isPrivate: Bool = false, numbers: Bool = true, x509: Bool = false, uppercase: Bool = false
    ) -> String {
        func hex(_ bytes: [UInt8]) -> String {
            // The list writes numbers without leading zeros: the exponent 65537 is "10001".
            let digits = bytes.map { String($0, radix: 16).leftPadded(to: 2) }.joined()
            let trimmed = String(digits.drop { $0 == "0" })
            return uppercase ? trimmed.uppercased() : trimmed
        }
        func json(_ text: String?) -> String {
            guard let text else { return "null" }
            let data = try! JSONSerialization.data(withJSONObject: [text], options: [.withoutEscapingSlashes])
            return String(String(decoding: data, as: UTF8.self).dropFirst().dropLast())
        }
        return """
            {"issuer_id": \(json(issuerID)), "modulus_hex": \(json(numbers ? hex(key.modulus) : nil)), \
            "public_exponent_hex": \(json(numbers ? hex(key.exponent) : nil)), "valid_from": \(json(validFrom)), \
            "valid_until": \(json(validUntil)), "is_test": \(isTest), "is_private": \(isPrivate), \
            "public_key_x509": \(json(x509 ? publicKeyPEM : nil))}
            """
    }
}

extension String {
    fileprivate func leftPadded(to count: Int) -> String {
        self.count >= count ? self : String(repeating: "0", count: count - self.count) + self
    }
}
