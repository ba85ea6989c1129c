import FareCore
import Signatures
import TicketFormats

@testable import Verification

extension TrustSnapshot {
    /// Adds the good keys of a UIC key list (XML) as an inspector's store holds them after
    /// `keys import --uic-xml`, each with its list entry; a key already held for the same versionType and
    /// barcodeVersion (from a list imported before) is kept as it is.
    mutating func addUICKeyList(xml: [UInt8]) throws {
        for entry in try UICKeyList.parse(xml: xml).entries {
            let listing = UICKeyListing(entry: entry)
            guard let material = try? KeyMaterial(parsingKeyFile: entry.certificateDER),
                !keys(family: .uic, issuer: IssuerID(entry.normalizedIssuerCode), keyID: KeyID(entry.normalizedKeyID))
                    .contains(where: {
                        $0.listing?.versionType == listing.versionType
                            && $0.listing?.barcodeVersion == listing.barcodeVersion
                    })
            else { continue }
            add(
                TrustedKey(
                    family: .uic, issuer: IssuerID(entry.normalizedIssuerCode), keyID: KeyID(entry.normalizedKeyID),
                    algorithm: entry.signatureAlgorithmText, publicKey: material.publicKey,
                    notBefore: entry.validFrom, notAfter: entry.validUntil, listing: listing))
        }
    }
}
