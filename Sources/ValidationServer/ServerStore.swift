import FareCore
import Foundation
import ValidationAPI

/// What the server keeps, whatever the database: devices, issuer keys, published key bundles, the
/// revocation list with its change log, and the inspections validators hand in.
///
/// One implementation, `SQLServerStore`, over two databases: SQLite (GRDB, one file, the default) and
/// PostgreSQL (postgres-nio, for a fleet). Both pass the same tests.
public protocol ServerStore: Sendable {
    /// `sqlite` or `postgresql`.
    var backendName: String { get }

    /// Registers a device with the SHA-256 of its token, in a role. A device id registered before is a conflict.
    func addDevice(id: String, tokenHash: [UInt8], role: DeviceRole, at date: Date) async throws(ServerError)
    /// Marks a device revoked; its token is refused from then on, and the first uses it claimed that no other
    /// device confirmed (by passing the ticket too) are withdrawn at `date`, in the same transaction. Nil when there
    /// is no such device.
    func revokeDevice(id: String, at date: Date) async throws(ServerError) -> RevokedDevice?
    /// Every device, by id.
    func devices() async throws(ServerError) -> [DeviceRecord]
    /// The device whose token hashes to `tokenHash`, revoked or not.
    func device(tokenHash: [UInt8]) async throws(ServerError) -> DeviceRecord?

    /// Adds an issuer key, or replaces the one with the same format, issuer and key id.
    func putIssuerKey(_ key: BundleKey, at date: Date) async throws(ServerError)
    /// Removes an issuer key from the next bundle. False when there is no such key.
    func removeIssuerKey(_ key: KeyReference) async throws(ServerError) -> Bool
    /// Every issuer key, ordered by format, issuer and key id.
    func issuerKeys() async throws(ServerError) -> [BundleKey]

    /// The newest published key bundle.
    func latestBundle() async throws(ServerError) -> PublishedBundle?
    /// The sequence of the newest published key bundle, without its document.
    func latestBundleSequence() async throws(ServerError) -> Int64?
    /// Stores a published bundle; `.conflict` when its sequence is not above every stored one.
    func storeBundle(_ bundle: PublishedBundle) async throws(ServerError)

    /// Revokes a ticket (again, with a new reason, if it was) and logs the change.
    func revokeTicket(_ entry: RevokedTicket) async throws(ServerError)
    /// Lifts a ticket's revocation and logs the change. False when it was not revoked.
    func unrevokeTicket(_ ticket: TicketReference) async throws(ServerError) -> Bool
    /// Revokes an issuer key and logs the change.
    func revokeKey(_ entry: RevokedKey) async throws(ServerError)
    /// Lifts a key's revocation and logs the change. False when it was not revoked.
    func unrevokeKey(_ key: KeyReference) async throws(ServerError) -> Bool
    /// The revocation of a ticket, if it is revoked.
    func ticketRevocation(_ ticket: TicketReference) async throws(ServerError) -> RevokedTicket?
    /// The revocation of a key, if it is revoked.
    func keyRevocation(_ key: KeyReference) async throws(ServerError) -> RevokedKey?
    /// Revokes many tickets in one transaction, each logged as its own change (an agency's bulk import).
    func revokeTickets(_ entries: [RevokedTicket]) async throws(ServerError)
    /// One page of what changed after `cursor` (at most `limit` entries), or of a full snapshot when the
    /// changes since then are no longer kept (see `RevocationLog.plan`). Read in one consistent snapshot.
    func revocationDelta(since cursor: Int64, limit: Int) async throws(ServerError) -> RevocationDelta
    /// Drops all but the newest `count` logged changes; validators with an older cursor then get a full
    /// snapshot. Returns how many changes were dropped.
    func pruneRevocationChanges(keepingLast count: Int) async throws(ServerError) -> Int

    /// Stores inspection records for a device, in one transaction. A record is known by the device and its id:
    /// another device's record with the same id is a record of its own. A record this device stored before is
    /// left as it was: sent again with the same content it is `.alreadyStored`, with other content `.refused`
    /// (`conflicting-record`, with the fields that differ).
    ///
    /// A record stored now whose `claims` entry (by index) is a backed claim records that first use (the claim's
    /// ticket and time, which the server verified, never the record's own fields); a record stored before claims
    /// nothing again.
    ///
    /// - Returns: One result per record, in order; every `.stored` and `.alreadyStored` record is stored when this
    ///   returns.
    func storeInspections(
        _ records: [InspectionRecord], deviceID: String, receivedAt: Date, claims: [BackedClaim?]
    ) async throws(ServerError) -> [InspectionResult]
    /// Stored inspections, newest first.
    func inspections(limit: Int) async throws(ServerError) -> [StoredInspection]
    /// Deletes the inspections made and received before `date` (both: a device whose clock is wrong cannot have
    /// its records deleted early by dating them back), in one transaction; returns how many went.
    func pruneInspections(before date: Date) async throws(ServerError) -> Int

    /// Claims the first use of a single-use ticket for the fleet: one statement inserts the claim unless the
    /// ticket has one (the primary key decides between concurrent claims, on any number of servers sharing the
    /// database), then the ticket's claim is read back. It is this claim's when it was inserted now, or when it
    /// is this device's claim for the same inspection (a retry).
    func claimFirstUse(_ claim: FirstUseClaim) async throws(ServerError) -> FirstUseRecord

    /// One page of the fleet's first uses recorded from `since` (Unix milliseconds, the server's clock) on, at most
    /// `limit`, oldest first, and never older than `FirstUseDelta.retentionMilliseconds` before `now`.
    func firstUses(since: Int64, limit: Int, now: Date) async throws(ServerError) -> FirstUseDelta
    /// The first uses uploaded after another device's first use of the same ticket (two gates that both passed it
    /// offline), newest first.
    func firstUseConflicts(limit: Int) async throws(ServerError) -> [FirstUseConflict]
    /// Forgets the first uses this server recorded before `date`, and the conflicts it found before it (its own
    /// clock both times, never a device's), in one transaction. A ticket forgotten here can be claimed again.
    func pruneFirstUses(recordedBefore date: Date) async throws(ServerError) -> PrunedFirstUses
    /// Withdraws the first uses `deviceID` claimed (recorded from `since` on, when given) that no other device
    /// confirmed, at `date`: validators forget them with their next page. Returns the withdrawn first uses.
    func withdrawFirstUses(ofDevice deviceID: String, since: Date?, reason: String, at date: Date)
        async throws(ServerError) -> [FirstUseWithdrawal]
    /// The first uses withdrawn, newest first (the operator's audit).
    func firstUseWithdrawals(limit: Int) async throws(ServerError) -> [FirstUseWithdrawalRecord]

    /// Runs a trivial query: throws when the database cannot be reached.
    func checkHealth() async throws(ServerError)

    // The publishers the server follows (TrustSourceStore.swift; issue 49).

    /// Every source's state, by name.
    func trustSourceStates() async throws(ServerError) -> [TrustSourceState]
    /// Writes a source's state (an attempt that changed nothing, or failed before any check).
    func recordTrustSourceState(_ state: TrustSourceState) async throws(ServerError)
    /// The newest audit lines (of one source, or all), newest first.
    func trustAudit(source: String?, limit: Int) async throws(ServerError) -> [TrustAuditEntry]
    /// Writes an audit line and the source's state, in one transaction.
    func recordTrustAudit(_ entry: TrustAuditEntry, state: TrustSourceState) async throws(ServerError)
    /// The issuer keys `source` brought.
    func issuerKeys(fromSource source: String) async throws(ServerError) -> [BundleKey]
    /// Stores and removes a source's keys, its state and the audit line, in one transaction.
    func applySourceKeys(
        source: String, adding: [BundleKey], removing: [BundleKey], state: TrustSourceState, audit: TrustAuditEntry
    ) async throws(ServerError)
    /// Holds a change for an operator, with its audit line and the source's state; returns its number.
    @discardableResult
    func holdTrustChange(
        _ change: PendingTrustChange, state: TrustSourceState, audit: TrustAuditEntry
    ) async throws(ServerError) -> Int64
    /// The keys that verified a ticket `valid` at or after `date`, by the inspections uploaded.
    func keysVerifying(since date: Date) async throws(ServerError) -> Set<KeyUse>
    /// How many entries the server holds of `list`.
    func blocklistEntryCount(_ list: BlocklistKind) async throws(ServerError) -> Int
    /// Every entry the server holds of `list` (a stand-alone gate hands a followed list to its validator's store).
    func blocklistEntries(_ list: BlocklistKind) async throws(ServerError) -> [BlocklistEntry]
    /// The changes held, newest first.
    func trustChanges(pendingOnly: Bool) async throws(ServerError) -> [PendingTrustChange]
    /// The held change numbered `id`.
    func trustChange(id: Int64) async throws(ServerError) -> PendingTrustChange?
    /// The newest held change of `source` with content `digest`.
    func trustChange(source: String, digest: String) async throws(ServerError) -> PendingTrustChange?
    /// Records an operator's decision on a pending change; false when it is not pending.
    func decideTrustChange(
        id: Int64, _ decision: TrustChangeDecision, audit: TrustAuditEntry
    ) async throws(ServerError) -> Bool
    /// Imports a published blocklist (VDV-KA, DTVG): its entries replace those of the version held, as logged
    /// removals and additions in one transaction. `.unchanged` for the version held; `.conflict` for an older
    /// one unless `force`.
    func importBlocklist(
        _ list: BlocklistKind, version: BlocklistVersion, entries: [BlocklistEntry], force: Bool, at date: Date
    ) async throws(ServerError) -> ServerBlocklistImport
    /// The blocklists the server distributes, with their versions.
    func blocklists() async throws(ServerError) -> [PublishedBlocklist]
    /// The blocklist entry naming a ticket of `format` with `issuer` and `ticketID` (online checks), if one does.
    func blocklistRevocation(format: String, issuer: String, ticketID: [UInt8]) async throws(ServerError)
        -> BlocklistRevocation?

    /// Registers an operator (who reads the report) with the SHA-256 of its token. A name registered before is a
    /// conflict.
    func addOperator(name: String, tokenHash: [UInt8], at date: Date) async throws(ServerError)
    /// Marks an operator revoked; its token and its open sessions are refused from then on. False when there is no
    /// such operator.
    func revokeOperator(name: String) async throws(ServerError) -> Bool
    /// Every operator, by name.
    func operators() async throws(ServerError) -> [OperatorRecord]
    /// The operator whose token hashes to `tokenHash`, revoked or not.
    func operatorAccount(tokenHash: [UInt8]) async throws(ServerError) -> OperatorRecord?
    /// The figures of the operator report for one day (and one device, or all), read in one snapshot.
    func operatorReport(_ query: ReportQuery) async throws(ServerError) -> OperatorReport
}

extension ServerStore {
    /// Stores inspection records that claim no first use (see `storeInspections(_:deviceID:receivedAt:claims:)`).
    public func storeInspections(_ records: [InspectionRecord], deviceID: String, receivedAt: Date)
        async throws(ServerError) -> [InspectionResult]
    {
        try await storeInspections(records, deviceID: deviceID, receivedAt: receivedAt, claims: [])
    }

    /// Everything that changed after `cursor` in one document, however large (the admin's `revocations list`).
    public func revocationDelta(since cursor: Int64) async throws(ServerError) -> RevocationDelta {
        try await revocationDelta(since: cursor, limit: Int(Int32.max))
    }
}

/// A validator's claim of a single-use ticket's first use.
public struct FirstUseClaim: Sendable, Equatable {
    /// The ticket's format as the validator named it ('' when it did not).
    public var format: String
    public var issuer: String
    public var ticketID: [UInt8]
    /// The claiming device (its id on this server).
    public var deviceID: String
    /// The inspection the claim is for.
    public var inspectionID: InspectionID?
    /// When the server received the claim.
    public var at: Date

    public init(
        format: String, issuer: String, ticketID: [UInt8], deviceID: String, inspectionID: InspectionID?, at: Date
    ) {
        self.format = format
        self.issuer = issuer
        self.ticketID = ticketID
        self.deviceID = deviceID
        self.inspectionID = inspectionID
        self.at = at
    }
}

/// The recorded first use of a ticket, and whether the claim answered is it.
public struct FirstUseRecord: Sendable, Equatable {
    public var deviceID: String
    public var inspectionID: InspectionID?
    public var usedAt: Date
    /// Whether the claim that asked won.
    public var isClaimant: Bool
}

/// A single-use ticket passed by a second device after the first one had (both gates offline, or the second one's
/// online check failed): found when the second device's inspection was uploaded.
public struct FirstUseConflict: Sendable, Equatable {
    /// The device whose upload found the conflict, and its inspection.
    public var deviceID: String
    public var inspectionID: InspectionID
    public var format: String
    public var issuer: String
    public var ticketID: [UInt8]
    /// When that device passed the ticket (its clock).
    public var usedAt: Date
    /// The first use it came after.
    public var firstDeviceID: String
    public var firstInspectionID: InspectionID?
    public var firstUsedAt: Date
    /// When the server found it (its clock).
    public var foundAt: Date
}

/// What `pruneFirstUses(recordedBefore:)` forgot.
public struct PrunedFirstUses: Sendable, Equatable {
    /// First uses dropped.
    public var firstUses: Int
    /// Conflicts dropped.
    public var conflicts: Int

    /// Makes a count.
    public init(firstUses: Int, conflicts: Int) {
        self.firstUses = firstUses
        self.conflicts = conflicts
    }
}

/// What a registered validator is, which decides what it may do.
public enum DeviceRole: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// A gate: it lets passengers through, and claims the first use of the single-use tickets it passes.
    case gate
    /// An inspector's handheld: it inspects, and never claims a first use (its token, if stolen, cannot make the
    /// fleet refuse anyone).
    case handheld

    public var description: String { rawValue }

    /// Whether a device of this role may claim first uses.
    public var claimsFirstUses: Bool { self == .gate }
}

/// A registered validator.
public struct DeviceRecord: Sendable, Equatable {
    /// The device id chosen by the admin.
    public var id: String
    /// Whether its token is refused.
    public var revoked: Bool
    /// When it was registered.
    public var createdAt: Date
    /// Gate or handheld.
    public var role: DeviceRole

    /// Makes a record.
    public init(id: String, revoked: Bool, createdAt: Date, role: DeviceRole = .gate) {
        self.id = id
        self.revoked = revoked
        self.createdAt = createdAt
        self.role = role
    }
}

/// A device revoked, and the first uses withdrawn with it.
public struct RevokedDevice: Sendable, Equatable {
    public var id: String
    /// The first uses of its own that no other device confirmed, now withdrawn.
    public var withdrawn: [FirstUseWithdrawal]
}

/// A withdrawn first use as the operator's audit shows it.
public struct FirstUseWithdrawalRecord: Sendable, Equatable {
    public var withdrawal: FirstUseWithdrawal
    /// Why: the device was revoked, or an operator forgot its claims.
    public var reason: String
}

/// A key bundle as published: its sequence and the exact bytes of its signed document.
public struct PublishedBundle: Sendable, Equatable {
    /// The bundle's sequence.
    public var sequence: Int64
    /// When it was published.
    public var issuedAt: Date
    /// The `SignedDocument` JSON, served as is.
    public var document: [UInt8]

    /// Makes a record.
    public init(sequence: Int64, issuedAt: Date, document: [UInt8]) {
        self.sequence = sequence
        self.issuedAt = issuedAt
        self.document = document
    }
}

/// An inspection as the server stored it.
public struct StoredInspection: Sendable, Equatable {
    /// The device (by registered id) that uploaded it.
    public var deviceID: String
    /// When the server stored it.
    public var receivedAt: Date
    /// The record as uploaded.
    public var record: InspectionRecord

    /// Makes a record.
    public init(deviceID: String, receivedAt: Date, record: InspectionRecord) {
        self.deviceID = deviceID
        self.receivedAt = receivedAt
        self.record = record
    }
}

/// Dates are stored as Unix milliseconds in both databases.
extension Date {
    /// Unix milliseconds; a date outside the API's range (which input checks keep out) is clamped to its ends
    /// rather than trapping.
    var unixMilliseconds: Int64 {
        if let milliseconds = WireFormat.milliseconds(self) { return milliseconds }
        return timeIntervalSince1970 > 0
            ? WireFormat.millisecondRange.upperBound : WireFormat.millisecondRange.lowerBound
    }

    init(unixMilliseconds: Int64) {
        self.init(timeIntervalSince1970: TimeInterval(unixMilliseconds) / 1000)
    }
}
