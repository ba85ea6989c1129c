import FareCore
import Foundation
import TrustStore

extension InspectionRecord {
    /// A journal row for `verdict`, made the way the daemon makes it: through an `Inspection`.
    init(
        id: String = UUID().uuidString, verdict: Verdict, device: String, symbology: Symbology?,
        payloadDigest: [UInt8], inspector: String? = nil
    ) {
        self.init(
            Inspection(
                id: id, source: device, symbology: symbology, payloadByteCount: 0, payloadDigest: payloadDigest,
                verdict: verdict, inspector: inspector))
    }
}
