import FareCore
import GRDB

// The store keeps each identifier as the text it always was: bound and read as such.

extension IssuerID: DatabaseValueConvertible {}
extension KeyID: DatabaseValueConvertible {}
extension InspectionID: DatabaseValueConvertible {}
extension SourceName: DatabaseValueConvertible {}
