import FareCore

/// A value read from a column of an SQLite row, in SQLite's own storage classes.
public enum SQLiteCell: Sendable, Hashable, CustomStringConvertible {
    case integer(Int64)
    case real(Double)
    case text([UInt8])
    case blob([UInt8])
    case null

    /// The value for a message: `57`, `"B"`, `x'0102'`, `NULL`.
    public var description: String {
        switch self {
        case .integer(let value): return String(value)
        case .real(let value): return String(value)
        case .text(let bytes): return DTVGBlocklistCSV.quoted(bytes)
        case .blob(let bytes): return "x'" + bytes.prefix(16).hexString + (bytes.count > 16 ? "…'" : "'")
        case .null: return "NULL"
        }
    }

    /// The value as a whole number: an integer, or text of 1 to 18 ASCII digits (a column without a declared
    /// type keeps what was inserted as text); `nil` for anything else.
    var wholeNumber: Int64? {
        switch self {
        case .integer(let value):
            return value
        case .text(let bytes):
            guard (1...18).contains(bytes.count), bytes.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
            return bytes.reduce(Int64(0)) { $0 * 10 + Int64($1 - 0x30) }
        default:
            return nil
        }
    }
}

/// The rows of the VDV-KA blocklist's table `blacklist(type, orgId, number, instanceNum, lockMode)`: each row checked,
/// and of the rows for one type, organisation and number only the one with the highest `instanceNum` kept.
///
/// What a row must hold: `type` the text `A` (user medium) or `B` (entitlement); `orgId` a whole number 0–65535;
/// `number` a whole number 0–4294967295; `instanceNum` a whole number ≥ 0; `lockMode` 0, 1 or 2. Whole numbers are
/// integers, or text of digits (as a column without a declared type holds them); reals, blobs and NULL are refused.
///
/// The rows must arrive ordered by type, organisation and number, and within those by `instanceNum` from the
/// highest (the reader asks SQLite to sort them so: `orderedQuery`); two rows with the same type, organisation,
/// number and instance are duplicates, refused.
public struct VDVBlocklistRows: Sendable {
    /// The table.
    public static let table = "blacklist"
    /// The columns read, in this order.
    public static let columns = ["type", "orgId", "number", "instanceNum", "lockMode"]
    /// The query that reads the rows in the order `accept` needs.
    public static let orderedQuery = """
        SELECT type, orgId, number, instanceNum, lockMode FROM blacklist
        ORDER BY CAST(type AS TEXT), CAST(orgId AS INTEGER), CAST(number AS INTEGER), CAST(instanceNum AS INTEGER) DESC
        """

    private var previous: (entry: VDVBlocklistEntry, row: Int)?
    /// Rows read.
    public private(set) var rowCount = 0
    /// Rows skipped because a row with a higher instance of the same number came first.
    public private(set) var supersededCount = 0

    public init() {}

    /// Checks row number `row` (from 1) and returns its entry, or `nil` when a higher instance of the same
    /// number came before it.
    ///
    /// - Throws: `malformed` naming the row and column for a value out of its range, a duplicate, or rows out of order.
    public mutating func accept(_ cells: [SQLiteCell], row: Int) throws(FormatError) -> VDVBlocklistEntry? {
        rowCount += 1
        let entry = try Self.entry(cells, row: row)
        defer { previous = (entry, row) }
        guard let (held, heldRow) = previous else { return entry }
        let sameNumber =
            held.item == entry.item && held.organisation == entry.organisation && held.number == entry.number
        guard sameNumber else {
            guard Self.precedes(held, entry) else {
                throw .malformed("row \(row) of table blacklist is out of order (the reader sorts the rows)")
            }
            return entry
        }
        guard entry.instance != held.instance else {
            throw .malformed(
                "rows \(heldRow) and \(row) of table blacklist are duplicates: \(entry.item.displayName) "
                    + "\(entry.number) of organisation \(entry.organisation), instance \(entry.instance) twice")
        }
        guard entry.instance < held.instance else {
            throw .malformed("row \(row) of table blacklist is out of order (the reader sorts the rows)")
        }
        supersededCount += 1
        return nil
    }

    /// The entry of one row, checked.
    public static func entry(_ cells: [SQLiteCell], row: Int) throws(FormatError) -> VDVBlocklistEntry {
        guard cells.count == columns.count else {
            throw .malformed("row \(row) of table blacklist has \(cells.count) columns, not \(columns.count)")
        }
        // Rows are counted in the reader's sorted order: the message names the whole row too.
        func refuse(_ column: Int, _ expected: String) -> FormatError {
            let values = cells.map(\.description).joined(separator: ", ")
            return .malformed(
                "row \(row) of table blacklist (\(values)): \(columns[column]) is \(cells[column]), not \(expected)")
        }
        let item: VDVBlocklistItem
        switch cells[0] {
        case .text([0x41]): item = .userMedium
        case .text([0x42]): item = .entitlement
        default: throw refuse(0, "A (user medium) or B (entitlement)")
        }
        guard let organisation = cells[1].wholeNumber, let org = UInt16(exactly: organisation) else {
            throw refuse(1, "an organisation id (0 to 65535)")
        }
        guard let numberValue = cells[2].wholeNumber, let number = UInt32(exactly: numberValue) else {
            throw refuse(2, "a number of 0 to 4294967295")
        }
        guard let instance = cells[3].wholeNumber, instance >= 0 else {
            throw refuse(3, "an instance number (0 or more)")
        }
        guard let mode = cells[4].wholeNumber, let lockMode = BlocklistLockMode(rawValue: Int(clamping: mode)) else {
            throw refuse(4, "a lock mode (0 block, 1 confiscate, 2 suspicious)")
        }
        return VDVBlocklistEntry(item: item, organisation: org, number: number, instance: instance, lockMode: lockMode)
    }

    /// The order of `orderedQuery`: type, organisation, number.
    static func precedes(_ lhs: VDVBlocklistEntry, _ rhs: VDVBlocklistEntry) -> Bool {
        (lhs.item.rawValue, lhs.organisation, lhs.number) < (rhs.item.rawValue, rhs.organisation, rhs.number)
    }
}
