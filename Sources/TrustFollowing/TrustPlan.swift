import FareCore
import Foundation
import TicketFormats
import ValidationAPI
import ValidationServer

/// What a source's content would change, and whether the guard rails let it through unattended.
struct TrustPlan: Sendable {
    /// The change itself.
    enum Change: Sendable {
        /// Keys to store (new or changed) and keys the source brought earlier that go.
        case keys(adding: [BundleKey], removing: [BundleKey])
        /// A blocklist version, applied whole (the store logs the difference).
        case blocklist(BlocklistKind, BlocklistVersion, [BlocklistEntry])
    }

    var change: Change
    /// What it changes, for the audit line: keys and entries added and removed, by name.
    var summary: String
    /// Why it is held for an operator; nil when the guard rails hold.
    var holdReason: String?
    /// The blocklist's version text.
    var version: String?

    /// Whether it changes nothing.
    var isEmpty: Bool {
        if case .keys(let adding, let removing) = change { return adding.isEmpty && removing.isEmpty }
        return false
    }

    static func make(
        _ candidate: CandidateTrust, source: TrustSourceConfiguration, store: any ServerStore, inUse: TrustInUse,
        now: Date
    ) async throws -> TrustPlan {
        switch candidate {
        case .keys(let keys, let refused):
            return try await keyPlan(keys, refused: refused, source: source, store: store, inUse: inUse, now: now)
        case .blocklist(let list, let version, let entries):
            return try await blocklistPlan(list, version, entries, source: source, store: store)
        }
    }

    private static func keyPlan(
        _ keys: [BundleKey], refused: [String], source: TrustSourceConfiguration, store: any ServerStore,
        inUse: TrustInUse, now: Date
    ) async throws -> TrustPlan {
        let held = try await store.issuerKeys(fromSource: source.name)
        let heldByIdentity = Dictionary(held.map { (identity(of: $0), $0) }, uniquingKeysWith: { first, _ in first })
        let wanted = Set(keys.map(identity(of:)))
        let adding = keys.filter { heldByIdentity[identity(of: $0)] != $0 }
        let removing = held.filter { !wanted.contains(identity(of: $0)) }
        var parts = [
            "\(adding.count) key\(adding.count == 1 ? "" : "s") added or changed\(names(adding))",
            "\(removing.count) removed\(names(removing))",
        ]
        if !refused.isEmpty {
            parts.append(
                "\(refused.count) entr\(refused.count == 1 ? "y" : "ies") refused (\(refused.prefix(3).joined(separator: "; "))"
                    + "\(refused.count > 3 ? "; …" : ""))")
        }
        var holdReason: String?
        if !held.isEmpty {
            let share = Double(removing.count) / Double(held.count)
            if share > source.maximumDropShare {
                holdReason =
                    "it would remove \(removing.count) of the \(held.count) keys the source brought "
                    + "(\(percent(share)), more than the \(percent(source.maximumDropShare)) allowed)"
            }
        }
        if holdReason == nil, !removing.isEmpty, source.protectKeysUsedWithinDays > 0 {
            let since = now.addingTimeInterval(-Double(source.protectKeysUsedWithinDays) * 86_400)
            let used = Set(try await inUse.keysVerifying(since).flatMap { names(of: $0) })
            let inUse = removing.filter { used.contains(use(key: $0)) }
            if !inUse.isEmpty {
                holdReason =
                    "it would remove \(inUse.count) key\(inUse.count == 1 ? "" : "s") tickets verified with in the last "
                    + "\(source.protectKeysUsedWithinDays) days\(names(inUse))"
            }
        }
        return TrustPlan(
            change: .keys(adding: adding, removing: removing), summary: parts.joined(separator: ", "),
            holdReason: holdReason, version: nil)
    }

    private static func blocklistPlan(
        _ list: BlocklistKind, _ version: BlocklistVersion, _ entries: [BlocklistEntry],
        source: TrustSourceConfiguration, store: any ServerStore
    ) async throws -> TrustPlan {
        let heldText = try await store.blocklists().first { $0.list == list }?.version
        let heldVersion = heldText.flatMap { try? BlocklistVersion(parsing: $0, for: list) }
        let heldCount = try await store.blocklistEntryCount(list)
        var summary = "\(list.displayName) version \(version.text), \(entries.count) entries"
        if let heldText { summary += " (version \(heldText) held, \(heldCount) entries)" }
        var holdReason: String?
        if let heldVersion, version < heldVersion {
            holdReason = "its version \(version.text) is older than version \(heldText ?? "") held"
        } else if heldCount > 0, Double(entries.count) < source.minimumKeptShare * Double(heldCount) {
            holdReason =
                "it has \(entries.count) entries, fewer than \(percent(source.minimumKeptShare)) of the \(heldCount) held"
        }
        return TrustPlan(
            change: .blocklist(list, version, entries), summary: summary, holdReason: holdReason, version: version.text)
    }

    /// The columns that tell one issuer key from another, as one text.
    static func identity(of key: BundleKey) -> String {
        "\(key.format)\u{0}\(key.issuer)\u{0}\(key.keyID)\u{0}\(key.versionType ?? "")\u{0}\(key.barcodeVersion ?? "")"
    }

    /// A key as an inspection and a key list both name it: UIC codes without leading zeros (`0080/00007` = `80/7`),
    /// other ids without case; a VDV sub-CA by its reference alone (a VDV verdict names the ticket's organisation as
    /// its issuer, and the CA that signed the ticket's certificate as its key).
    private static func use(key: BundleKey) -> String {
        switch key.format {
        case KeyFamily.uic.wireName:
            "\(UICKeyList.normalizedCode(key.issuer.rawValue))/\(UICKeyList.normalizedCode(key.keyID.rawValue))"
        case KeyFamily.vdv.wireName: "vdv/\(key.keyID.rawValue.lowercased())"
        default: "\(key.issuer.rawValue.lowercased())/\(key.keyID.rawValue.lowercased())"
        }
    }

    /// The names `use` may match a key by (see `use(key:)`).
    private static func names(of use: KeyUse) -> [String] {
        let issuer = use.issuer.rawValue
        let keyID = use.keyID.rawValue
        var names = ["\(issuer.lowercased())/\(keyID.lowercased())", "vdv/\(keyID.lowercased())"]
        if UICKeyList.isRICSCode(issuer) {
            names.append("\(UICKeyList.normalizedCode(issuer))/\(UICKeyList.normalizedCode(keyID))")
        }
        return names
    }

    /// ` (uic 1080/42, …)`: the first few keys by name.
    private static func names(_ keys: [BundleKey]) -> String {
        guard !keys.isEmpty else { return "" }
        let named = keys.prefix(5).map { "\($0.format) \(PrintableText($0.issuer))/\(PrintableText($0.keyID))" }
        return " (\(named.joined(separator: ", "))\(keys.count > 5 ? ", …" : ""))"
    }

    private static func percent(_ share: Double) -> String { "\(Int((share * 100).rounded())) %" }
}
