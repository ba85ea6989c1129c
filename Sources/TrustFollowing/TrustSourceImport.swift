import FareCore
import Foundation
import Signatures
import TicketFormats
import TrustStore
import ValidationAPI
import ValidationServer
import Verification

/// Reads a publisher's content with the importers the CLI uses (`farecheck keys import --uic-xml`, `--rsp6`,
/// `farecheck-server keys add --format vdv`, `revoke --vdv-blocklist`, `--dtvg-blocklist`): what does not parse, or
/// does not chain, never becomes trust.
enum TrustSourceImport {
    /// The content of `source` as candidate trust; `version` is the version file's text, for a blocklist.
    static func candidate(
        _ source: TrustSourceConfiguration, content: [UInt8], version: String?, inUse: TrustInUse
    ) async throws -> CandidateTrust {
        switch source.kind {
        case .uicKeyList: return try uicKeys(content)
        case .rsp6KeyList: return try rsp6Keys(content)
        case .vdvLDAP: return try vdvCertificates(content, anchors: try await inUse.vdvRoots())
        case .vdvBlocklist: return try blocklist(.vdvKA, content, version: version)
        case .dtvgBlocklist: return try blocklist(.dtvgUIC, content, version: version)
        }
    }

    /// Every good entry of the UIC key list as a `uic` bundle key (issuer code and key id normalised, `80` = `0080`),
    /// with what the entry says it is for; a bad entry is refused by name, the others kept. A list with no good key
    /// at all is refused whole.
    static func uicKeys(_ xml: [UInt8]) throws -> CandidateTrust {
        let list = try UICKeyList.parse(xml: xml)
        var refused = list.problems.map(\.description)
        var keys: [BundleKey] = []
        var seen: Set<String> = []
        for entry in list.entries {
            let material: KeyMaterial
            do {
                material = try KeyMaterial(parsingKeyFile: entry.certificateDER)
            } catch {
                refused.append("\(entry.issuerCode)/\(entry.keyID): the public key cannot be read: \(error.message)")
                continue
            }
            let key = BundleKey(
                format: KeyFamily.uic.wireName, issuer: IssuerID(entry.normalizedIssuerCode),
                keyID: KeyID(entry.normalizedKeyID), algorithm: entry.signatureAlgorithmText,
                spki: material.publicKey.spkiDER, notBefore: entry.validFrom ?? material.certificate?.notBefore,
                notAfter: entry.validUntil ?? material.certificate?.notAfter, versionType: entry.versionType,
                barcodeVersion: entry.barcodeVersion, keyForged: entry.forged,
                allowedProductOwnerCodes: entry.allowedProductOwnerCodes)
            guard seen.insert(TrustPlan.identity(of: key)).inserted else {
                refused.append("\(entry.issuerCode)/\(entry.keyID): listed twice for one kind of barcode")
                continue
            }
            keys.append(key)
        }
        guard !keys.isEmpty else {
            throw FormatError.malformed("the UIC key list holds no key that can be read (\(refused.count) refused)")
        }
        return .keys(keys, refused: refused)
    }

    /// The RSP6 key list's live keys as `rsp6` bundle keys (test keys refused: a bundle cannot mark them).
    static func rsp6Keys(_ json: [UInt8]) throws -> CandidateTrust {
        var plan = RSP6KeyImportPlan(try RSP6KeyFile.entries(parsing: json, issuer: nil))
        plan.refuseTestKeys()
        let keys = plan.keys.map(\.trusted).map { key in
            BundleKey(
                format: KeyFamily.rsp6.wireName, issuer: key.issuer, keyID: key.keyID, algorithm: key.algorithm,
                spki: key.publicKey.spkiDER, notBefore: key.notBefore, notAfter: key.notAfter)
        }
        guard !keys.isEmpty else {
            throw FormatError.malformed("the RSP6 key list holds no live key (\(plan.refusals.count) refused)")
        }
        return .keys(keys, refused: plan.refusals.map { "\($0)" })
    }

    /// The directory's sub-CA certificates that chain to a VDV root the server pins, as `vdv` bundle keys; one
    /// that does not chain is refused by name (the directory's answer is not trust), as is a root (roots are pinned
    /// by hand, `keys add --format vdv --root`).
    static func vdvCertificates(_ document: [UInt8], anchors: [VDVAuthority]) throws -> CandidateTrust {
        guard !anchors.isEmpty else {
            throw ServerError(
                code: .invalidInput,
                message: "No VDV root is pinned here, so no certificate of the directory can be trusted "
                    + "(on a server `farecheck-server keys add --format vdv --root FILE` pins one; on a gate "
                    + "`farecheck keys import --vdv-root FILE`)")
        }
        var keys: [BundleKey] = []
        var refused: [String] = []
        var seen: Set<String> = []
        for line in String(decoding: document, as: UTF8.self).split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 1)
            guard parts.count == 2, let bytes = [UInt8](hex: String(parts[1])) else { continue }
            let name = String(parts[0])
            let authority: VDVAuthority
            do {
                authority = try VDVCertificateImport.subCA(
                    bytes, underAnyOf: anchors, trustUnsigned: false, rootlessIfUnsigned: false)
            } catch {
                refused.append("\(PrintableText(name)): \(error.message)")
                continue
            }
            guard let spki = try? authority.key.publicKey().spkiDER else {
                refused.append("\(PrintableText(name)): the certificate's RSA key cannot be used")
                continue
            }
            let key = BundleKey(
                format: KeyFamily.vdv.wireName, issuer: IssuerID(authority.certificate.authority.bytes.hexString),
                keyID: KeyID(authority.reference.bytes.hexString), algorithm: nil, spki: spki,
                notAfter: authority.certificate.expiry?.end, certificate: bytes, root: false)
            guard seen.insert(TrustPlan.identity(of: key)).inserted else { continue }
            keys.append(key)
        }
        guard !keys.isEmpty else {
            throw FormatError.malformed(
                "no certificate of the directory chains to a pinned VDV root (\(refused.count) refused: "
                    + "\(refused.prefix(3).joined(separator: "; ")))")
        }
        return .keys(keys, refused: refused)
    }

    /// A blocklist file read by the reader `revoke --vdv-blocklist` / `--dtvg-blocklist` uses, with its version
    /// from the version file (required: a list without a version cannot be ordered against the one held).
    static func blocklist(_ list: BlocklistKind, _ content: [UInt8], version: String?) throws -> CandidateTrust {
        guard let version else {
            throw ServerError(
                code: .invalidInput,
                message: "The \(list.displayName) needs its version file (version_url): without it a version going "
                    + "back cannot be told")
        }
        let parsedVersion = try BlocklistVersion(parsing: version, for: list)
        // The readers take a file (SQLite opens a path): the content goes to a private temporary file, removed after.
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("farecheck-trust-\(UUID().uuidString)").path
        guard
            FileManager.default.createFile(
                atPath: path, contents: Data(content), attributes: [.posixPermissions: 0o600])
        else {
            throw ServerError(
                code: .storageFailure, message: "Cannot write a temporary copy of the \(list.displayName)")
        }
        defer { try? FileManager.default.removeItem(atPath: path) }
        var entries: [BlocklistEntry] = []
        try BlocklistFile.read(list, path: path) { entry, _ in entries.append(entry) }
        return .blocklist(list, parsedVersion, entries)
    }
}
