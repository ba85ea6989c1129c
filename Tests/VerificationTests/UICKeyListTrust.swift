import Signatures
import TicketFormats

@testable import Verification

extension TrustSnapshot {
    /// Adds the good keys of a UIC key list (XML) as an inspector's store holds them after
    /// `keys import --uic-xml`; a key already held (from a list imported before) is kept as it is.
    mutating func addUICKeyList(xml: [UInt8]) throws {
        for entry in try UICKeyList.parse(xml: xml).entries {
            guard let material = try? KeyMaterial(parsingKeyFile: entry.certificateDER),
                key(family: .uic, issuer: entry.normalizedIssuerCode, keyID: entry.normalizedKeyID) == nil
            else { continue }
            add(
                TrustedKey(
                    family: .uic, issuer: entry.normalizedIssuerCode, keyID: entry.normalizedKeyID,
                    algorithm: entry.signatureAlgorithmText, publicKey: material.publicKey,
                    notBefore: entry.validFrom, notAfter: entry.validUntil))
        }
    }
}
