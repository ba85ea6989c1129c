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
    /// The salted hash of the PIN.
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
        pin = PINHash(
            salt: Array(row["pin_salt"] as Data), hash: Array(row["pin_hash"] as Data),
            iterations: row["pin_iterations"])
        addedAt = row["added_at"]
    }

    public func encode(to container: inout PersistenceContainer) throws {
        container["staff_id"] = staffID
        container["name"] = name
        container["pin_salt"] = Data(pin.salt)
        container["pin_hash"] = Data(pin.hash)
        container["pin_iterations"] = pin.iterations
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
