import FareCore
import Foundation
import TrustStore
import ValidationAPI

extension InspectionRecord {
    /// A journal row for `verdict`, made the way the daemon makes it: through an `Inspection`.
    init(
        id: InspectionID = .random(), verdict: Verdict, device: SourceName, symbology: Symbology?,
        payloadDigest: [UInt8], inspector: String? = nil
    ) {
        self.init(
            Inspection(
                id: id, source: device, symbology: symbology, payloadByteCount: 0, payloadDigest: payloadDigest,
                verdict: verdict, inspector: inspector))
    }
}
