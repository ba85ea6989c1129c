import Foundation
import GRDB
import Signatures

/// An inspector who may log in on a handheld, with the hash of their PIN.
public struct StaffRecord: Sendable, Equatable, FetchableRecord, PersistableRecord {
    public static let databaseTableName = "staff"

    /// The staff id the inspector types (or their badge carries).
    public var staffID: String
    /// A display name for the page and the journal.
    public var name: String?
    /// The salted hash of the PIN (scrypt, or PBKDF2 from an older farecheck until the next good login).
    public var pin: PINHash
    /// When the record was added, Unix seconds.
    public var addedAt: Int64

    public init(staffID: String, name: String?, pin: PINHash, addedAt: Date = Date()) {
        self.staffID = staffID
        self.name = name
        self.pin = pin
        self.addedAt = Int64(addedAt.timeIntervalSince1970)
    }

    public init(row: Row) throws {
        staffID = row["staff_id"]
        name = row["name"]
        // An unknown function name (a newer farecheck's) reads as PBKDF2 and simply never matches.
        let function = PINHash.Function(rawValue: row["pin_kdf"] ?? "") ?? .pbkdf2SHA256
        pin = PINHash(
            function: function, salt: Array(row["pin_salt"] as Data), hash: Array(row["pin_hash"] as Data),
            cost: row["pin_iterations"], blockSize: row["pin_block_size"] ?? 0,
            parallelism: row["pin_parallelism"] ?? 0, secretID: row["pin_secret_id"])
        addedAt = row["added_at"]
    }

    public func encode(to container: inout PersistenceContainer) throws {
        container["staff_id"] = staffID
        container["name"] = name
        container["pin_salt"] = Data(pin.salt)
        container["pin_hash"] = Data(pin.hash)
        container["pin_iterations"] = pin.cost
        container["pin_kdf"] = pin.function.rawValue
        container["pin_block_size"] = pin.blockSize
        container["pin_parallelism"] = pin.parallelism
        container["pin_secret_id"] = pin.secretID
        container["added_at"] = addedAt
    }
}

extension TrustStore {
    /// Adds an inspector, or replaces the one with the same staff id (a new PIN).
    public func saveStaff(_ record: StaffRecord) throws(StoreError) {
        try write { db in try record.save(db) }
    }

    /// The inspector with `staffID`, if registered.
    public func staff(withID staffID: String) throws(StoreError) -> StaffRecord? {
        try read { db in try StaffRecord.filter(Column("staff_id") == staffID).fetchOne(db) }
    }

    /// Replaces the PIN hash of `staffID` with `pin`, if the inspector is still registered with the hash `old`
    /// (a PIN changed meanwhile by `farecheck staff add` is left alone); returns whether it was replaced.
    @discardableResult
    public func upgradePIN(ofStaff staffID: String, from old: PINHash, to pin: PINHash) throws(StoreError) -> Bool {
        try write { db in
            guard var record = try StaffRecord.filter(Column("staff_id") == staffID).fetchOne(db), record.pin == old
            else { return false }
            record.pin = pin
            try record.update(db)
            return true
        }
    }

    /// Every inspector, by staff id.
    public func allStaff() throws(StoreError) -> [StaffRecord] {
        try read { db in try StaffRecord.order(Column("staff_id")).fetchAll(db) }
    }

    /// Removes an inspector; returns whether one was removed.
    @discardableResult
    public func removeStaff(withID staffID: String) throws(StoreError) -> Bool {
        try write { db in try StaffRecord.filter(Column("staff_id") == staffID).deleteAll(db) > 0 }
    }
}
