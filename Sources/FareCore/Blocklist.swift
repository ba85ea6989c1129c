import Foundation

/// The published lists through which German transport operators revoke Deutschland-Tickets (and other tickets of
/// the VDV-KA and UIC worlds). Operators obtain them from the DTVG/VDV eTicket service; farecheck imports the files.
public enum BlocklistKind: String, Sendable, Hashable, CaseIterable, Codable, CustomStringConvertible {
    /// The VDV-KA blocklist: an SQLite file whose table `blacklist` names VDV-KA entitlements and user media.
    case vdvKA = "vdv-ka"
    /// The DTVG UIC blocklist: `blacklistuic.csv` in a zip, naming UIC tickets by RICS code and ticket id.
    case dtvgUIC = "dtvg-uic"

    /// The list's name in a sentence, e.g. `VDV-KA blocklist`.
    public var displayName: String {
        switch self {
        case .vdvKA: "VDV-KA blocklist"
        case .dtvgUIC: "DTVG UIC blocklist"
        }
    }

    /// ``displayName`` as a phrase that can be translated.
    public var phrase: Explanation {
        switch self {
        case .vdvKA: "VDV-KA blocklist"
        case .dtvgUIC: "DTVG UIC blocklist"
        }
    }

    public var description: String { rawValue }
}

/// What a VDV-KA blocklist entry tells the inspector to do (the list's `lockMode`). A gate refuses all three.
public enum BlocklistLockMode: Int, Sendable, Hashable, CaseIterable, Codable, CustomStringConvertible {
    /// `0`: a plain block; the ticket is not valid.
    case block = 0
    /// `1`: the ticket is to be confiscated: the inspector keeps it.
    case confiscate = 1
    /// `2`: the ticket is suspicious: the inspector checks the passenger's ID.
    case suspicious = 2

    /// The mode's name, as in JSON: `block`, `confiscate`, `suspicious`.
    public var name: String {
        switch self {
        case .block: "block"
        case .confiscate: "confiscate"
        case .suspicious: "suspicious"
        }
    }

    /// What the inspector does.
    public var action: BlocklistAction {
        switch self {
        case .block: .refuse
        case .confiscate: .keepTicket
        case .suspicious: .checkID
        }
    }

    public var description: String { name }

    /// Encoded by name (`"confiscate"`), the list's number being in `rawValue`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(name)
    }

    /// Decoded from its name or its number.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let number = try? container.decode(Int.self), let mode = BlocklistLockMode(rawValue: number) {
            self = mode
            return
        }
        let name = try container.decode(String.self)
        guard let mode = Self.allCases.first(where: { $0.name == name }) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "unknown lock mode \"\(name)\" (block, confiscate, suspicious)")
        }
        self = mode
    }
}

/// What the inspector is told to do with a ticket found on a blocklist.
public enum BlocklistAction: String, Sendable, Hashable, CaseIterable, Codable, CustomStringConvertible {
    /// Refuse the ticket (lock mode 0, and every DTVG entry).
    case refuse = "refuse"
    /// Keep the ticket: it is to be confiscated (lock mode 1).
    case keepTicket = "keep-ticket"
    /// Check the passenger's ID: the ticket is suspicious (lock mode 2).
    case checkID = "check-id"

    /// The instruction, as a sentence for the inspector.
    public var instruction: Explanation {
        switch self {
        case .refuse: "Refuse the ticket."
        case .keepTicket: "Keep the ticket: it is to be confiscated."
        case .checkID: "Check the passenger's ID: the ticket is suspicious."
        }
    }

    public var description: String { rawValue }
}

/// The version of a blocklist: a newer list replaces an older one of the same kind.
///
/// The VDV-KA blocklist is versioned by an ISO 8601 timestamp (its `version.txt`), the DTVG UIC blocklist by an
/// integer (`blacklistId` in its `versionuic.txt`).
public enum BlocklistVersion: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// An instant (VDV-KA), kept to the millisecond.
    case timestamp(Date)
    /// A number (DTVG).
    case number(Int64)

    /// The version as text: `2025-06-01T03:00:00Z` (milliseconds only when there are some) or the number.
    public var text: String {
        switch self {
        case .number(let number):
            return String(number)
        case .timestamp(let date):
            let millis = Int64((date.timeIntervalSince1970 * 1000).rounded())
            let seconds = millis >= 0 ? millis / 1000 : (millis - 999) / 1000
            let fraction = millis - seconds * 1000
            let civil = CivilTime(unixSeconds: seconds)
            // Four digits for the year, as ISO 8601 and the reader want them (`0224`, found by fuzz-blocklist).
            let year = String(civil.year)
            let paddedYear = civil.year >= 0 ? String(repeating: "0", count: max(0, 4 - year.count)) + year : year
            var text =
                "\(paddedYear)-\(civil.month.twoDigits)-\(civil.day.twoDigits)T\(civil.hour.twoDigits):\(civil.minute.twoDigits)"
            text += ":\(civil.second.twoDigits)"
            if fraction != 0 {
                let digits = String(fraction)
                text += "." + String(repeating: "0", count: 3 - digits.count) + digits
            }
            return text + "Z"
        }
    }

    public var description: String { text }

    /// Orders versions of one kind; a timestamp and a number (two kinds) compare by kind only.
    public static func < (lhs: BlocklistVersion, rhs: BlocklistVersion) -> Bool {
        switch (lhs, rhs) {
        case (.timestamp(let a), .timestamp(let b)): a < b
        case (.number(let a), .number(let b)): a < b
        case (.timestamp, .number): true
        case (.number, .timestamp): false
        }
    }
}

extension BlocklistVersion {
    /// Unix seconds of a UTC day and time (no range checks: the caller checks the fields).
    public static func unixSeconds(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) -> Int64 {
        Int64(CivilTime.days(year: year, month: month, day: day)) * 86_400 + Int64(hour * 3600 + minute * 60 + second)
    }
}

/// What a VDV-KA blocklist entry names (its `type`).
public enum VDVBlocklistItem: String, Sendable, Hashable, CaseIterable, Codable, CustomStringConvertible {
    /// `A`: a user medium (Nutzermedium), a VDV-KA chip card. A static barcode carries no user medium number, so
    /// these entries are kept but match no scanned ticket.
    case userMedium = "A"
    /// `B`: an entitlement (Berechtigung), matched by the ticket's organisation and entitlement number.
    case entitlement = "B"

    /// `user medium`, `entitlement`.
    public var displayName: String {
        switch self {
        case .userMedium: "user medium"
        case .entitlement: "entitlement"
        }
    }

    /// ``displayName`` as a phrase that can be translated.
    public var phrase: Explanation {
        switch self {
        case .userMedium: "user medium"
        case .entitlement: "entitlement"
        }
    }

    public var description: String { rawValue }
}

/// One row of the VDV-KA blocklist (the one with the highest `instanceNum` of its type, organisation and number).
public struct VDVBlocklistEntry: Sendable, Hashable {
    /// User medium or entitlement (`type`).
    public var item: VDVBlocklistItem
    /// The organisation id (`orgId`): for an entitlement, the ticket's selling (KVP) organisation.
    public var organisation: UInt16
    /// The user medium or entitlement number (`number`).
    public var number: UInt32
    /// The instance counter (`instanceNum`): of several rows for one number, the highest applies.
    public var instance: Int64
    /// What the inspector does (`lockMode`).
    public var lockMode: BlocklistLockMode

    public init(
        item: VDVBlocklistItem, organisation: UInt16, number: UInt32, instance: Int64, lockMode: BlocklistLockMode
    ) {
        self.item = item
        self.organisation = organisation
        self.number = number
        self.instance = instance
        self.lockMode = lockMode
    }
}

/// One row of the DTVG UIC blocklist.
public struct DTVGBlocklistEntry: Sendable, Hashable {
    /// The distributing RICS code (U_HEAD's issuer, else the FCB issuer), as a number: `0080` and `80` are one.
    public var rics: UInt32
    /// The ticket id (U_HEAD's ticket key, else the FCB ticket id), as text.
    public var ticketID: String

    public init(rics: UInt32, ticketID: String) {
        self.rics = rics
        self.ticketID = ticketID
    }
}

/// An entry of either blocklist.
public enum BlocklistEntry: Sendable, Hashable, CustomStringConvertible {
    case vdv(VDVBlocklistEntry)
    case dtvg(DTVGBlocklistEntry)

    /// The list the entry belongs to.
    public var list: BlocklistKind {
        switch self {
        case .vdv: .vdvKA
        case .dtvg: .dtvgUIC
        }
    }

    /// The entry's lock mode: a DTVG entry is a plain block.
    public var lockMode: BlocklistLockMode {
        switch self {
        case .vdv(let entry): entry.lockMode
        case .dtvg: .block
        }
    }

    /// `entitlement 2099643 of organisation 57 (instance 3, lock mode 1)`, `ticket QWXY3BTA of RICS 1080`.
    public var description: String { phrase.english }

    /// ``description`` as a phrase that can be translated.
    public var phrase: Explanation {
        switch self {
        case .vdv(let entry):
            "\(entry.item.phrase) \(entry.number) of organisation \(entry.organisation) "
                + "(type \(entry.item.rawValue), instance \(entry.instance), lock mode \(entry.lockMode.rawValue))"
        case .dtvg(let entry):
            "ticket \(entry.ticketID) of RICS \(entry.rics)"
        }
    }
}

extension BlocklistEntry: Codable {
    private enum CodingKeys: String, CodingKey {
        case list, type, orgId, number, instanceNum, lockMode, rics, ticketId
    }

    /// `{list: "vdv-ka", type, orgId, number, instanceNum, lockMode}` or `{list: "dtvg-uic", rics, ticketId}`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(list, forKey: .list)
        switch self {
        case .vdv(let entry):
            try container.encode(entry.item, forKey: .type)
            try container.encode(entry.organisation, forKey: .orgId)
            try container.encode(entry.number, forKey: .number)
            try container.encode(entry.instance, forKey: .instanceNum)
            try container.encode(entry.lockMode.rawValue, forKey: .lockMode)
        case .dtvg(let entry):
            try container.encode(entry.rics, forKey: .rics)
            try container.encode(entry.ticketID, forKey: .ticketId)
        }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        switch try container.decode(BlocklistKind.self, forKey: .list) {
        case .vdvKA:
            self = .vdv(
                VDVBlocklistEntry(
                    item: try container.decode(VDVBlocklistItem.self, forKey: .type),
                    organisation: try container.decode(UInt16.self, forKey: .orgId),
                    number: try container.decode(UInt32.self, forKey: .number),
                    instance: try container.decode(Int64.self, forKey: .instanceNum),
                    lockMode: try Self.lockMode(container.decode(Int.self, forKey: .lockMode), in: container)))
        case .dtvgUIC:
            self = .dtvg(
                DTVGBlocklistEntry(
                    rics: try container.decode(UInt32.self, forKey: .rics),
                    ticketID: try container.decode(String.self, forKey: .ticketId)))
        }
    }

    /// The list's number of a lock mode (0, 1, 2).
    private static func lockMode(_ number: Int, in container: KeyedDecodingContainer<CodingKeys>) throws
        -> BlocklistLockMode
    {
        guard let mode = BlocklistLockMode(rawValue: number) else {
            throw DecodingError.dataCorruptedError(
                forKey: .lockMode, in: container, debugDescription: "lock mode \(number) is not 0, 1 or 2")
        }
        return mode
    }
}

/// Why a ticket is `revoked` by a blocklist: the list and its version, the entry that matched, and what to do.
///
/// Carried by the verdict (`Verdict.blocklistRevocation`) to `verify --json`, the daemon's event line and the
/// inspector page as `revocation: {list, version, entry, lockMode, action}`.
public struct BlocklistRevocation: Sendable, Hashable, Codable {
    /// The list the entry is on.
    public var list: BlocklistKind
    /// The version of the list that holds it.
    public var version: String
    /// The entry that matched the ticket.
    public var entry: BlocklistEntry
    /// The entry's lock mode.
    public var lockMode: BlocklistLockMode { entry.lockMode }
    /// What the inspector does.
    public var action: BlocklistAction { lockMode.action }

    public init(version: String, entry: BlocklistEntry) {
        self.list = entry.list
        self.version = version
        self.entry = entry
    }

    /// The verdict's reason: the list, its version, the entry and the instruction.
    public var reason: Explanation {
        "On the \(list.phrase) (version \(version)): \(entry.phrase). \(action.instruction)"
    }

    private enum CodingKeys: String, CodingKey {
        case list, version, entry, lockMode, action
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(list, forKey: .list)
        try container.encode(version, forKey: .version)
        try container.encode(entry, forKey: .entry)
        try container.encode(lockMode, forKey: .lockMode)
        try container.encode(action, forKey: .action)
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let entry = try container.decode(BlocklistEntry.self, forKey: .entry)
        self.init(version: try container.decode(String.self, forKey: .version), entry: entry)
    }
}
