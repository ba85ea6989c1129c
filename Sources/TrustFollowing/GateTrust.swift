import FareCore
import Foundation
import Logging
import TrustStore
import ValidationAPI
import ValidationServer
import Verification

/// A stand-alone gate following its publishers itself (`[[trust.source]]` in `farecheck`'s configuration).
///
/// The gate runs the server's follower unchanged: its rounds, guard rails, audit and held changes live in a house of
/// its own, a reference-server SQLite file beside the validator's store (``housePath(store:)``), which
/// `farecheck-server trust status|pending|approve|reject --db HOUSE` reads and decides on as on a server.
/// What the house holds from each source is then handed to the validator's store, where verification reads it: keys
/// and VDV authorities under the source's own name (``TrustStore/followedSource(_:)``), so that the next list
/// replaces exactly what the source brought, and a blocklist as the list the gate holds.
///
/// The guard rails read the gate's own trust in use (``inUse(_:)``): its pinned VDV roots, and the keys its own
/// journal says verified a ticket.
public struct GateTrustHandOver: Sendable {
    /// The follower's house.
    public let house: any ServerStore
    /// The validator's store.
    public let gate: TrustStore
    public let logger: Logger

    public init(house: any ServerStore, gate: TrustStore, logger: Logger) {
        self.house = house
        self.gate = gate
        self.logger = logger
    }

    /// The house of a gate whose store is at `store`: `trust-sources.sqlite` in the same directory.
    public static func housePath(store: String) -> String {
        URL(fileURLWithPath: store).deletingLastPathComponent().appendingPathComponent("trust-sources.sqlite").path
    }

    /// The gate's trust in use: the VDV roots it pinned (`farecheck keys import --vdv-root`), and the keys its own
    /// journal says verified a ticket `valid`.
    public static func inUse(_ gate: TrustStore) -> TrustInUse {
        TrustInUse(
            vdvRoots: { try gate.pinnedVDVRoots() },
            keysVerifying: { date in
                Set(
                    try gate.inspectionJournal.keysVerifying(since: date).map {
                        KeyUse(issuer: $0.issuer, keyID: $0.keyID)
                    })
            })
    }

    /// Makes the validator's store hold what the house holds from `source`; a line saying what changed, or `nil`
    /// when the store held it already.
    public func handOver(_ source: TrustSourceConfiguration) async throws -> String? {
        switch source.kind {
        case .uicKeyList, .rsp6KeyList, .vdvLDAP: return try await handOverKeys(source)
        case .vdvBlocklist: return try await handOverBlocklist(.vdvKA, source)
        case .dtvgBlocklist: return try await handOverBlocklist(.dtvgUIC, source)
        }
    }

    private func handOverKeys(_ source: TrustSourceConfiguration) async throws -> String? {
        let storeSource = TrustStore.followedSource(source.name)
        var records: [KeyRecord] = []
        var authorities: [VDVAuthority] = []
        var skipped: [String] = []
        let roots = source.kind == .vdvLDAP ? try gate.pinnedVDVRoots() : []
        for key in try await house.issuerKeys(fromSource: source.name) {
            if key.format == KeyFamily.vdv.wireName {
                // The house checked the chain to the roots the gate pinned; checked again as the store keeps it.
                guard let certificate = key.certificate else { continue }
                do {
                    authorities.append(
                        try VDVCertificateImport.subCA(
                            certificate, underAnyOf: roots, trustUnsigned: false, rootlessIfUnsigned: false))
                } catch {
                    skipped.append("VDV certificate \(key.keyID): \(error.message)")
                }
            } else if let record = KeyRecord(key, source: storeSource) {
                records.append(record)
            }
        }
        for line in skipped { logger.warning("trust source \(source.name): not handed to the store: \(line)") }
        let change = try gate.replaceFollowedKeys(source: storeSource, keys: records, vdvAuthorities: authorities)
        guard !change.isEmpty else { return nil }
        return "the validator's store: \(change.added) key\(change.added == 1 ? "" : "s") added, \(change.changed) "
            + "changed, \(change.removed) removed"
    }

    private func handOverBlocklist(_ list: BlocklistKind, _ source: TrustSourceConfiguration) async throws -> String? {
        guard let version = try await house.blocklists().first(where: { $0.list == list })?.version else {
            return nil
        }
        let held = try gate.blocklists().first { $0.list == list && $0.origin == .local }?.version
        if held == version { return nil }
        let parsed = try BlocklistVersion(parsing: version, for: list)
        let entries = try await house.blocklistEntries(list)
        // The house ordered the versions (a version going back was held, and an operator approved it): forced here.
        try gate.importBlocklist(list, version: parsed, force: true) { add in
            for (offset, entry) in entries.enumerated() { try add(entry, offset + 1) }
        }
        return "the validator's store: \(list.displayName) version \(version), \(entries.count) entries"
    }
}

/// Hands a house's changes to the validator's store as they happen: after each of the follower's rounds, and on a
/// short period for what an operator decided in the house in between (`farecheck-server trust approve`).
public actor GateTrustSettler {
    private let handOver: GateTrustHandOver
    private let sources: [TrustSourceConfiguration]
    /// Told each source's health (version, last success, age, staleness) after every settle: the daemon's
    /// `/healthz` and page.
    private let onHealth: @Sendable ([TrustSourceHealth]) -> Void
    /// Each source's last change (`TrustSourceState.lastChange`) as handed over; a source absent was never handed
    /// over by this run (so at start every source is, once).
    private var handed: [String: Date?] = [:]

    public init(
        handOver: GateTrustHandOver, sources: [TrustSourceConfiguration],
        onHealth: @escaping @Sendable ([TrustSourceHealth]) -> Void = { _ in }
    ) {
        self.handOver = handOver
        self.sources = sources
        self.onHealth = onHealth
    }

    /// Hands over every source whose house state changed since it was last handed over; a failure is logged and
    /// tried again next time (the store is as it was).
    public func settle() async {
        let held = (try? await handOver.house.trustSourceStates()) ?? []
        let states = Dictionary(held.map { ($0.name, $0.lastChange) }, uniquingKeysWith: { first, _ in first })
        let now = Date()
        onHealth(
            sources.map { source in
                let state = held.first { $0.name == source.name }
                return TrustSourceHealth(
                    name: source.name, kind: source.kind.rawValue, version: state?.version,
                    lastSuccess: state?.lastSuccess, ageSeconds: state?.age(at: now).map { Int64($0.rounded(.down)) },
                    stale: state?.isStale(after: source.staleAfter, at: now) ?? false)
            })
        for source in sources {
            let lastChange = states[source.name] ?? nil
            if let seen = handed[source.name], seen == lastChange { continue }
            do {
                if let line = try await handOver.handOver(source) {
                    handOver.logger.notice("trust source \(source.name): handed over to \(line)")
                }
                handed[source.name] = lastChange
            } catch {
                handOver.logger.error(
                    "trust source \(source.name): the validator's store could not take the change: \(error); tried again"
                )
            }
        }
    }
}
