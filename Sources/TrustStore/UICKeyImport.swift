import FareCore
import Foundation
import Signatures
import TicketFormats

/// What importing a UIC key list did.
public struct UICKeyImportReport: Sendable {
    /// Keys that were not in the store before.
    public var added: Int
    /// Keys already in the store, updated in place.
    public var updated: Int
    /// Keys removed because the list no longer has them (only with `replace`).
    public var removed: Int
    /// Entries that were not imported, each naming its issuer and key id.
    public var problems: [UICKeyList.Problem]
}

extension TrustStore {
    /// Imports the UIC public key list: every good entry becomes a `uic-918-3` key (issuer code and key
    /// id normalised, `80` = `0080`) with what the entry says it is for (versionType, barcodeVersion, keyForged,
    /// allowedProductOwnerCodes), updated in place when already present; each bad entry is reported and skipped,
    /// never aborting the rest. One issuer and key id listed for several kinds of barcode (versionType and
    /// barcodeVersion) are several keys; the same entry twice keeps the first. With `replace`, UIC keys the list
    /// does not name are removed.
    ///
    /// All writes happen in one transaction: a failure (disk full) leaves the store as it was.
    ///
    /// `progress` is told every 1,000 entries read (entries read, entries in all), and once more before the keys are
    /// stored: a list of tens of thousands of keys takes seconds.
    public func importUICKeyList(
        _ list: UICKeyList, replace: Bool = false, source: String = "uic-key-list",
        progress: (_ done: Int, _ total: Int) -> Void = { _, _ in }
    ) throws(StoreError) -> UICKeyImportReport {
        var problems = list.problems
        var records: [KeyRecord] = []
        var seen: Set<KeyRecord.Identity> = []
        for (index, entry) in list.entries.enumerated() {
            if index % 1000 == 0, index > 0 { progress(index, list.entries.count) }
            // The list carries certificates, and for a few issuers a bare public key (SubjectPublicKeyInfo).
            let material: KeyMaterial
            do {
                material = try KeyMaterial(parsingKeyFile: entry.certificateDER)
            } catch {
                problems.append(
                    UICKeyList.Problem(
                        issuerCode: entry.issuerCode, keyID: entry.keyID,
                        message: "the public key cannot be read: \(error.message)"))
                continue
            }
            let record = KeyRecord(
                family: .uic, issuer: IssuerID(entry.normalizedIssuerCode), keyID: KeyID(entry.normalizedKeyID),
                algorithm: entry.signatureAlgorithmText, spki: material.publicKey.spkiDER,
                certificate: material.certificate?.der,
                notBefore: entry.validFrom ?? material.certificate?.notBefore,
                notAfter: entry.validUntil ?? material.certificate?.notAfter,
                source: source, issuerName: entry.issuerName, versionType: entry.versionType,
                barcodeVersion: entry.barcodeVersion, forged: entry.forged,
                allowedProductOwners: entry.allowedProductOwnerCodes)
            guard seen.insert(record.identity).inserted else {
                problems.append(
                    UICKeyList.Problem(
                        issuerCode: entry.issuerCode, keyID: entry.keyID,
                        message: "listed twice for the same versionType and barcodeVersion; the first entry was kept"))
                continue
            }
            records.append(record)
        }
        progress(list.entries.count, list.entries.count)
        let counts = try saveKeys(records, replacingFamily: replace ? .uic : nil)
        return UICKeyImportReport(
            added: counts.added, updated: counts.updated, removed: counts.removed, problems: problems)
    }
}
