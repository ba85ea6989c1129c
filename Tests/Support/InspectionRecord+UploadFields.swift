import FareCore
import ValidationAPI

extension InspectionRecord {
    /// A record made from the fields an upload had before the journal, the upload and the server shared one record
    /// type, with their plain types: how the tests write the uploads of a validator, as it sends them.
    public init(
        id: String, inspectedAt: Int64, device: String, symbology: Recorded<Symbology>?, payloadDigest: [UInt8],
        format: Recorded<TicketFormat>?, issuer: String?, ticketID: [UInt8]?, verdict: Recorded<VerdictKind>,
        reason: String, signature: Recorded<SignatureStatus>, warnings: String, inspector: String?,
        decidedBy: Recorded<Decider>? = nil, firstUse: Bool? = nil, payload: [UInt8]? = nil
    ) {
        self.init(
            id: InspectionID(id), inspectedAt: inspectedAt, source: SourceName(device), symbology: symbology,
            payloadDigest: payloadDigest, format: format, issuer: issuer.map(IssuerID.init),
            ticketID: ticketID.map(TicketID.init), verdict: verdict, reason: reason, signature: signature,
            warnings: InspectionRecord.warnings(codes: warnings, messages: []), inspector: inspector,
            decidedBy: decidedBy, firstUse: firstUse, payload: payload)
    }
}
