import FareCore
import Foundation

/// The revocations that changed since a cursor, as the server sends them (signed, in a `SignedDocument`).
///
/// The server numbers every revocation change (an add or a removal) with an increasing sequence; a
/// cursor is the last sequence a validator applied. A delta holds what changed after `from`, up to and
/// including `next`, which the validator asks with the next time. When the server no longer has the
/// changes since `from` (the cursor is 0, older than what it retains, or ahead of it), it sends every
/// current revocation with `full == true`: the validator then replaces everything it holds.
///
/// A delta is one page of at most a few tens of thousands of entries. When `more` is true the validator
/// applies it and asks again with `cursor=next` at once. A full snapshot pages the same way: its first page
/// has `full == true` and the following pages are ordinary deltas from `next`; they also carry whatever
/// changed on the server between the pages, so the validator ends with the server's current list. While a
/// snapshot is paged, `next` can be negative (a position in the snapshot, not a change number): the
/// validator stores and sends it like any other cursor.
public struct RevocationDelta: Sendable, Equatable, Codable {
    /// Entries a page holds when the validator asks for no `limit`.
    public static let defaultPageLimit = 10_000
    /// The most entries a page may hold; a larger `limit` is refused.
    public static let maximumPageLimit = 50_000

    /// The cursor this delta starts after (as the validator sent it).
    public var from: Int64
    /// The cursor to send next time: the newest change this delta includes.
    public var next: Int64
    /// Whether this is a full snapshot: replace every synced revocation with `addedTickets` and `addedKeys`.
    public var full: Bool
    /// Tickets revoked since `from` (in a full snapshot: every revoked ticket).
    public var addedTickets: [RevokedTicket]
    /// Tickets no longer revoked since `from` (always empty in a full snapshot).
    public var removedTickets: [TicketReference]
    /// Keys revoked since `from` (in a full snapshot: every revoked key).
    public var addedKeys: [RevokedKey]
    /// Keys no longer revoked since `from` (always empty in a full snapshot).
    public var removedKeys: [KeyReference]
    /// Whether the server holds more: apply this page, then ask again with `cursor=next`. Absent in
    /// documents from servers that do not page, which read as false.
    public var more: Bool
    /// When the server signed this page. A validator that accepts it counts it in its trusted-time floor (a
    /// device clock earlier than that is wrong). Optional: absent from servers older than the field.
    public var issuedAt: Date?
    /// The published blocklists (VDV-KA, DTVG) the server distributes, each with its current version: every page
    /// names them all (a full snapshot too), so that a validator knows which version its entries come from. Absent
    /// (empty) from servers without blocklists.
    public var blocklists: [PublishedBlocklist]
    /// Blocklist entries put on a list since `from` (a full snapshot: every entry); a VDV entry whose instance or
    /// lock mode changed comes again, replacing the one held. Absent (empty) when there are none.
    public var addedBlocklistEntries: [BlocklistEntry]
    /// Blocklist entries taken off their list since `from` (a newer version no longer names them). Absent (empty)
    /// when there are none.
    public var removedBlocklistEntries: [BlocklistEntry]

    /// Makes a delta.
    public init(
        from: Int64, next: Int64, full: Bool, addedTickets: [RevokedTicket] = [],
        removedTickets: [TicketReference] = [], addedKeys: [RevokedKey] = [], removedKeys: [KeyReference] = [],
        more: Bool = false, issuedAt: Date? = nil, blocklists: [PublishedBlocklist] = [],
        addedBlocklistEntries: [BlocklistEntry] = [], removedBlocklistEntries: [BlocklistEntry] = []
    ) {
        self.from = from
        self.next = next
        self.full = full
        self.addedTickets = addedTickets
        self.removedTickets = removedTickets
        self.addedKeys = addedKeys
        self.removedKeys = removedKeys
        self.more = more
        self.issuedAt = issuedAt
        self.blocklists = blocklists
        self.addedBlocklistEntries = addedBlocklistEntries
        self.removedBlocklistEntries = removedBlocklistEntries
    }

    /// How many entries the page holds, added and removed, tickets, keys and blocklist entries.
    public var entryCount: Int {
        addedTickets.count + removedTickets.count + addedKeys.count + removedKeys.count + addedBlocklistEntries.count
            + removedBlocklistEntries.count
    }

    private enum CodingKeys: String, CodingKey {
        case from, next, full, addedTickets, removedTickets, addedKeys, removedKeys, more, issuedAt, blocklists
        case addedBlocklistEntries, removedBlocklistEntries
    }

    /// Reads a delta; a missing `more` is false, a missing `issuedAt` nil.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        from = try container.decode(Int64.self, forKey: .from)
        next = try container.decode(Int64.self, forKey: .next)
        full = try container.decode(Bool.self, forKey: .full)
        addedTickets = try container.decode([RevokedTicket].self, forKey: .addedTickets)
        removedTickets = try container.decode([TicketReference].self, forKey: .removedTickets)
        addedKeys = try container.decode([RevokedKey].self, forKey: .addedKeys)
        removedKeys = try container.decode([KeyReference].self, forKey: .removedKeys)
        more = try container.decodeIfPresent(Bool.self, forKey: .more) ?? false
        issuedAt = try container.decodeIfPresent(Date.self, forKey: .issuedAt)
        blocklists = try container.decodeIfPresent([PublishedBlocklist].self, forKey: .blocklists) ?? []
        addedBlocklistEntries =
            try container.decodeIfPresent([BlocklistEntry].self, forKey: .addedBlocklistEntries) ?? []
        removedBlocklistEntries =
            try container.decodeIfPresent([BlocklistEntry].self, forKey: .removedBlocklistEntries) ?? []
    }

    /// Writes a delta, `more` included, `issuedAt` when set.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(from, forKey: .from)
        try container.encode(next, forKey: .next)
        try container.encode(full, forKey: .full)
        try container.encode(addedTickets, forKey: .addedTickets)
        try container.encode(removedTickets, forKey: .removedTickets)
        try container.encode(addedKeys, forKey: .addedKeys)
        try container.encode(removedKeys, forKey: .removedKeys)
        try container.encode(more, forKey: .more)
        try container.encodeIfPresent(issuedAt, forKey: .issuedAt)
        // Only when there are some: a server without blocklists writes what it always wrote.
        if !blocklists.isEmpty { try container.encode(blocklists, forKey: .blocklists) }
        if !addedBlocklistEntries.isEmpty {
            try container.encode(addedBlocklistEntries, forKey: .addedBlocklistEntries)
        }
        if !removedBlocklistEntries.isEmpty {
            try container.encode(removedBlocklistEntries, forKey: .removedBlocklistEntries)
        }
    }

    /// Whether nothing changed: not a snapshot and no entries. (The blocklist versions a page names change only
    /// with entries or on their own as an entry of the change log, so they do not count here.)
    public var isEmpty: Bool {
        !full && !more && addedTickets.isEmpty && removedTickets.isEmpty && addedKeys.isEmpty && removedKeys.isEmpty
            && addedBlocklistEntries.isEmpty && removedBlocklistEntries.isEmpty
    }
}

/// A published blocklist the server distributes, and its current version.
public struct PublishedBlocklist: Sendable, Hashable, Codable {
    /// `vdv-ka` or `dtvg-uic`.
    public var list: BlocklistKind
    /// The version (`BlocklistVersion.text`: an ISO 8601 timestamp for VDV-KA, a number for DTVG).
    public var version: String

    public init(list: BlocklistKind, version: String) {
        self.list = list
        self.version = version
    }
}

/// A ticket, named by its issuer and ticket id.
public struct TicketReference: Sendable, Hashable, Codable {
    /// The issuer of the ticket.
    public var issuer: IssuerID
    /// The ticket id (FC1 `cti`, UIC ticket key bytes); lowercase hex on the wire.
    public var ticketID: TicketID

    /// Makes a reference.
    public init(issuer: IssuerID, ticketID: TicketID) {
        self.issuer = issuer
        self.ticketID = ticketID
    }

    private enum CodingKeys: String, CodingKey {
        case issuer, ticketID
    }

    /// Reads a reference; `ticketID` is hex.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        issuer = try container.decode(IssuerID.self, forKey: .issuer)
        ticketID = TicketID(try container.decodeHex(forKey: .ticketID))
    }

    /// Writes a reference; `ticketID` as lowercase hex.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(issuer, forKey: .issuer)
        try container.encodeHex(ticketID.bytes, forKey: .ticketID)
    }
}

/// A revoked ticket.
public struct RevokedTicket: Sendable, Hashable, Codable {
    /// The issuer of the ticket.
    public var issuer: IssuerID
    /// The ticket id; lowercase hex on the wire.
    public var ticketID: TicketID
    /// Why it was revoked, for the inspector.
    public var reason: String?
    /// When it was revoked.
    public var revokedAt: Date

    /// Makes an entry.
    public init(issuer: IssuerID, ticketID: TicketID, reason: String?, revokedAt: Date) {
        self.issuer = issuer
        self.ticketID = ticketID
        self.reason = reason
        self.revokedAt = revokedAt
    }

    /// The ticket this entry names.
    public var reference: TicketReference { TicketReference(issuer: issuer, ticketID: ticketID) }

    private enum CodingKeys: String, CodingKey {
        case issuer, ticketID, reason, revokedAt
    }

    /// Reads an entry; `ticketID` is hex.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        issuer = try container.decode(IssuerID.self, forKey: .issuer)
        ticketID = TicketID(try container.decodeHex(forKey: .ticketID))
        reason = try container.decodeIfPresent(String.self, forKey: .reason)
        revokedAt = try container.decode(Date.self, forKey: .revokedAt)
    }

    /// Writes an entry; `ticketID` as lowercase hex, no `reason` when there is none.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(issuer, forKey: .issuer)
        try container.encodeHex(ticketID.bytes, forKey: .ticketID)
        try container.encodeIfPresent(reason, forKey: .reason)
        try container.encode(revokedAt, forKey: .revokedAt)
    }
}

/// An issuer key, named by format, issuer and key id.
public struct KeyReference: Sendable, Hashable, Codable {
    /// `fc1` or `uic`, as in `BundleKey.format`.
    public var format: String
    /// The issuer the key belongs to.
    public var issuer: IssuerID
    /// The key id as tickets carry it.
    public var keyID: KeyID

    /// Makes a reference.
    public init(format: String, issuer: IssuerID, keyID: KeyID) {
        self.format = format
        self.issuer = issuer
        self.keyID = keyID
    }
}

/// A revoked issuer key: every ticket it signed is `revoked`.
public struct RevokedKey: Sendable, Hashable, Codable {
    /// `fc1` or `uic`, as in `BundleKey.format`.
    public var format: String
    /// The issuer the key belongs to.
    public var issuer: IssuerID
    /// The key id as tickets carry it.
    public var keyID: KeyID
    /// Why it was revoked.
    public var reason: String?
    /// When it was revoked.
    public var revokedAt: Date

    /// Makes an entry.
    public init(format: String, issuer: IssuerID, keyID: KeyID, reason: String?, revokedAt: Date) {
        self.format = format
        self.issuer = issuer
        self.keyID = keyID
        self.reason = reason
        self.revokedAt = revokedAt
    }

    /// The key this entry names.
    public var reference: KeyReference { KeyReference(format: format, issuer: issuer, keyID: keyID) }
}

extension RevocationDelta {
    /// Reads a delta from the JSON bytes of a signed payload, as `WireFormat.decode` would but about twenty
    /// times faster: a page of 50,000 entries is read in a few tenths of a second instead of half a second
    /// per 50,000 × 11 µs.
    ///
    /// Unknown members are skipped (as `JSONDecoder` does, so that a newer server may add some); a member
    /// named twice is refused, so that no two readers can disagree on what was signed.
    ///
    /// - Throws: `JSONReadError` saying what was expected where, for anything that is not a delta.
    public init(wireBytes: [UInt8]) throws(JSONReadError) {
        self = try wireBytes.withUnsafeBufferPointer { (buffer) throws(JSONReadError) -> RevocationDelta in
            var reader = JSONReader(buffer)
            var skipped: [SkippedEntry]? = nil
            let delta = try Self.read(&reader, skipped: &skipped)
            try reader.expectEnd()
            return delta
        }
    }

    /// Reads a delta as `init(wireBytes:)` does, but each entry on its own: an entry that cannot be read (a date
    /// outside years 1-9999, a ticket id that is not hex, a missing field) is left out and named in the reading's
    /// `skipped`. The page's own fields are read strictly.
    ///
    /// - Throws: `JSONReadError` for bytes that are not JSON, and for a page whose own fields cannot be read.
    public static func reading(wireBytes: [UInt8]) throws(JSONReadError) -> PageReading<RevocationDelta> {
        try wireBytes.withUnsafeBufferPointer { (buffer) throws(JSONReadError) -> PageReading<RevocationDelta> in
            var reader = JSONReader(buffer)
            var skipped: [SkippedEntry]? = []
            let delta = try Self.read(&reader, skipped: &skipped)
            try reader.expectEnd()
            return PageReading(page: delta, skipped: skipped ?? [])
        }
    }

    private static let deltaFields: [StaticString] = [
        "from", "next", "full", "more", "addedTickets", "removedTickets", "addedKeys", "removedKeys", "issuedAt",
        "blocklists", "addedBlocklistEntries", "removedBlocklistEntries",
    ]
    private static let blocklistFields: [StaticString] = ["list", "version"]
    private static let blocklistEntryFields: [StaticString] = [
        "list", "type", "orgId", "number", "instanceNum", "lockMode", "rics", "ticketId",
    ]
    private static let ticketFields: [StaticString] = ["issuer", "ticketID", "reason", "revokedAt"]
    private static let ticketReferenceFields = Array(ticketFields[..<2])
    private static let keyFields: [StaticString] = ["format", "issuer", "keyID", "reason", "revokedAt"]
    private static let keyReferenceFields = Array(keyFields[..<3])

    /// Reads a delta; with `skipped` nil, strictly (one bad entry refuses the page), else entry by entry, each
    /// entry that cannot be read named in `skipped`.
    private static func read(_ reader: inout JSONReader, skipped: inout [SkippedEntry]?) throws(JSONReadError)
        -> RevocationDelta
    {
        var from: Int64?
        var next: Int64?
        var full: Bool?
        var more: Bool?
        var addedTickets: [RevokedTicket]?
        var removedTickets: [TicketReference]?
        var addedKeys: [RevokedKey]?
        var removedKeys: [KeyReference]?
        var issuedAt: Date?
        var blocklists: [PublishedBlocklist] = []
        var addedBlocklistEntries: [BlocklistEntry] = []
        var removedBlocklistEntries: [BlocklistEntry] = []
        var strings = WireStrings()
        let start = reader.position
        let tolerant = skipped != nil
        /// Reads a list of entries: strictly, or each on its own.
        func entries<Entry>(
            _ reader: inout JSONReader, _ list: String,
            _ element: (inout JSONReader) throws(JSONReadError) -> Entry
        ) throws(JSONReadError) -> [Entry] {
            guard tolerant else { return try reader.readArray(element) }
            return try reader.readArray(
                skipping: { index, error in
                    skipped?.append(SkippedEntry(list: list, index: index, reason: error.description))
                }, element)
        }
        try reader.readObject(fields: deltaFields) { (field, reader) throws(JSONReadError) in
            switch field {
            case 0: from = try reader.readInt64()
            case 1: next = try reader.readInt64()
            case 2: full = try reader.readBool()
            case 3: more = try reader.readNull() ? nil : try reader.readBool()
            case 4:
                addedTickets = try entries(&reader, "addedTickets") { (reader) throws(JSONReadError) in
                    let ticket = try readTicket(&reader, strings: &strings, revoked: true)
                    return RevokedTicket(
                        issuer: ticket.issuer, ticketID: ticket.ticketID, reason: ticket.reason,
                        revokedAt: ticket.revokedAt!)
                }
            case 5:
                removedTickets = try entries(&reader, "removedTickets") { (reader) throws(JSONReadError) in
                    let ticket = try readTicket(&reader, strings: &strings, revoked: false)
                    return TicketReference(issuer: ticket.issuer, ticketID: ticket.ticketID)
                }
            case 6:
                addedKeys = try entries(&reader, "addedKeys") { (reader) throws(JSONReadError) in
                    let key = try readKey(&reader, strings: &strings, revoked: true)
                    return RevokedKey(
                        format: key.format, issuer: key.issuer, keyID: key.keyID, reason: key.reason,
                        revokedAt: key.revokedAt!)
                }
            case 7:
                removedKeys = try entries(&reader, "removedKeys") { (reader) throws(JSONReadError) in
                    let key = try readKey(&reader, strings: &strings, revoked: false)
                    return KeyReference(format: key.format, issuer: key.issuer, keyID: key.keyID)
                }
            case 8: issuedAt = try reader.readNull() ? nil : try reader.readDate()
            case 9:
                blocklists = try reader.readArray { (reader) throws(JSONReadError) in try readBlocklist(&reader) }
            case 10:
                addedBlocklistEntries = try entries(&reader, "addedBlocklistEntries") {
                    (reader) throws(JSONReadError) in
                    try readBlocklistEntry(&reader)
                }
            default:
                removedBlocklistEntries = try entries(&reader, "removedBlocklistEntries") {
                    (reader) throws(JSONReadError) in
                    try readBlocklistEntry(&reader)
                }
            }
        }
        guard let from, let next, let full, let addedTickets, let removedTickets, let addedKeys, let removedKeys
        else {
            let missing = [
                ("from", from == nil), ("next", next == nil), ("full", full == nil),
                ("addedTickets", addedTickets == nil), ("removedTickets", removedTickets == nil),
                ("addedKeys", addedKeys == nil), ("removedKeys", removedKeys == nil),
            ].filter(\.1).map(\.0)
            throw JSONReadError("a revocation delta lacks \(missing.joined(separator: ", "))", at: start)
        }
        return RevocationDelta(
            from: from, next: next, full: full, addedTickets: addedTickets, removedTickets: removedTickets,
            addedKeys: addedKeys, removedKeys: removedKeys, more: more ?? false, issuedAt: issuedAt,
            blocklists: blocklists,
            addedBlocklistEntries: addedBlocklistEntries, removedBlocklistEntries: removedBlocklistEntries)
    }

    /// Reads a published blocklist: `{list, version}`.
    private static func readBlocklist(_ reader: inout JSONReader) throws(JSONReadError) -> PublishedBlocklist {
        var list: BlocklistKind?
        var version: String?
        let start = reader.position
        try reader.readObject(fields: blocklistFields) { (field, reader) throws(JSONReadError) in
            let at = reader.position
            switch field {
            case 0:
                let name = try reader.readString()
                guard let kind = BlocklistKind(rawValue: name) else {
                    throw JSONReadError("unknown blocklist \"\(name.prefix(40))\" (vdv-ka, dtvg-uic)", at: at)
                }
                list = kind
            default: version = try reader.readString()
            }
        }
        guard let list, let version else { throw JSONReadError("a blocklist needs list and version", at: start) }
        return PublishedBlocklist(list: list, version: version)
    }

    /// Reads a blocklist entry: `{list: "vdv-ka", type, orgId, number, instanceNum, lockMode}` or
    /// `{list: "dtvg-uic", rics, ticketId}`, each number in its range.
    private static func readBlocklistEntry(_ reader: inout JSONReader) throws(JSONReadError) -> BlocklistEntry {
        var list: BlocklistKind?
        var item: VDVBlocklistItem?
        var numbers: [Int64?] = [nil, nil, nil, nil, nil]  // orgId, number, instanceNum, lockMode, rics
        var ticketID: String?
        let start = reader.position
        try reader.readObject(fields: blocklistEntryFields) { (field, reader) throws(JSONReadError) in
            let at = reader.position
            switch field {
            case 0:
                let name = try reader.readString()
                guard let kind = BlocklistKind(rawValue: name) else {
                    throw JSONReadError("unknown blocklist \"\(name.prefix(40))\" (vdv-ka, dtvg-uic)", at: at)
                }
                list = kind
            case 1:
                let name = try reader.readString()
                guard let value = VDVBlocklistItem(rawValue: name) else {
                    throw JSONReadError("a VDV blocklist entry's type is A or B", at: at)
                }
                item = value
            case 7: ticketID = try reader.readString()
            default: numbers[field == 6 ? 4 : field - 2] = try reader.readInt64()
            }
        }
        func need(_ index: Int, _ range: ClosedRange<Int64>, _ name: String) throws(JSONReadError) -> Int64 {
            guard let value = numbers[index], range.contains(value) else {
                throw JSONReadError(
                    "a blocklist entry needs \(name) in \(range.lowerBound)…\(range.upperBound)", at: start)
            }
            return value
        }
        switch list {
        case .vdvKA:
            guard let item else { throw JSONReadError("a VDV blocklist entry needs its type", at: start) }
            let organisation = try need(0, 0...Int64(UInt16.max), "orgId")
            let number = try need(1, 0...Int64(UInt32.max), "number")
            let instance = try need(2, 0...Int64.max, "instanceNum")
            let mode = try need(3, 0...2, "lockMode")
            return .vdv(
                VDVBlocklistEntry(
                    item: item, organisation: UInt16(organisation), number: UInt32(number), instance: instance,
                    lockMode: BlocklistLockMode(rawValue: Int(mode))!))
        case .dtvgUIC:
            let rics = try need(4, 0...Int64(UInt32.max), "rics")
            guard let ticketID else { throw JSONReadError("a DTVG blocklist entry needs its ticketId", at: start) }
            return .dtvg(DTVGBlocklistEntry(rics: UInt32(rics), ticketID: ticketID))
        case nil:
            throw JSONReadError("a blocklist entry needs its list", at: start)
        }
    }

    /// Reads a revoked ticket (`revoked`: `revokedAt` required, `reason` read) or a ticket reference (both
    /// skipped, as `JSONDecoder` skips members a type does not have).
    private static func readTicket(_ reader: inout JSONReader, strings: inout WireStrings, revoked: Bool)
        throws(JSONReadError) -> (issuer: IssuerID, ticketID: TicketID, reason: String?, revokedAt: Date?)
    {
        var issuer: String?
        var ticketID: [UInt8]?
        var reason: String?
        var revokedAt: Date?
        let start = reader.position
        try reader.readObject(fields: revoked ? ticketFields : ticketReferenceFields) {
            (field, reader) throws(JSONReadError) in
            switch field {
            case 0: issuer = try reader.readString(cache: &strings.issuer)
            case 1: ticketID = try reader.readHex()
            case 2: reason = try reader.readNull() ? nil : try reader.readString(cache: &strings.reason)
            default: revokedAt = try reader.readDate()
            }
        }
        guard let issuer, let ticketID, !revoked || revokedAt != nil else {
            let needs =
                revoked
                ? "a revoked ticket needs issuer, ticketID and revokedAt"
                : "a ticket reference needs issuer and ticketID"
            throw JSONReadError(needs, at: start)
        }
        return (IssuerID(issuer), TicketID(ticketID), reason, revokedAt)
    }

    /// Reads a revoked key or a key reference, as `readTicket` does tickets.
    private static func readKey(_ reader: inout JSONReader, strings: inout WireStrings, revoked: Bool)
        throws(JSONReadError) -> (format: String, issuer: IssuerID, keyID: KeyID, reason: String?, revokedAt: Date?)
    {
        var format: String?
        var issuer: String?
        var keyID: String?
        var reason: String?
        var revokedAt: Date?
        let start = reader.position
        try reader.readObject(fields: revoked ? keyFields : keyReferenceFields) {
            (field, reader) throws(JSONReadError) in
            switch field {
            case 0: format = try reader.readString(cache: &strings.format)
            case 1: issuer = try reader.readString(cache: &strings.issuer)
            case 2: keyID = try reader.readString()
            case 3: reason = try reader.readNull() ? nil : try reader.readString(cache: &strings.reason)
            default: revokedAt = try reader.readDate()
            }
        }
        guard let format, let issuer, let keyID, !revoked || revokedAt != nil else {
            let needs =
                revoked
                ? "a revoked key needs format, issuer, keyID and revokedAt"
                : "a key reference needs format, issuer and keyID"
            throw JSONReadError(needs, at: start)
        }
        return (format, IssuerID(issuer), KeyID(keyID), reason, revokedAt)
    }
}

/// The strings a page repeats, made once per run of equal values.
private struct WireStrings {
    var issuer = StringCache()
    var reason = StringCache()
    var format = StringCache()
}
