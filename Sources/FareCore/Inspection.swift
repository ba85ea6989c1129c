import Foundation

/// One inspection: a scanned payload, the verdict shown for it, and who and what decided.
///
/// The one value every consumer derives its own form from, each by one function: the journal row
/// (`InspectionRecord`), the upload to the validation API, the daemon's event line and the CLI's report.
public struct Inspection: Sendable {
    /// The inspection's id: the journal record id, the same in every sink and on the server.
    public var id: InspectionID
    /// The scanner (configured name, else device path), camera or file the payload came from.
    public var source: SourceName
    /// When the scan's last byte arrived (the scanner's, camera's or file's time), before any work on it.
    public var receivedAt: Date?
    /// The symbology the payload was read from, when known.
    public var symbology: Symbology?
    /// The payload size in bytes.
    public var payloadByteCount: Int
    /// SHA-256 of the payload: identifies the scan without keeping the ticket itself.
    public var payloadDigest: [UInt8]
    /// The verdict shown.
    public var verdict: Verdict
    /// Whose verdict was shown.
    public var decidedBy: Decider
    /// The inspector logged in (inspector mode), if any.
    public var inspector: String?
    /// From the scan's arrival in the pipeline to the verdict being delivered, when measured.
    public var latency: Duration?
    /// The ticket's printed layout (UIC U_TLAY) as text lines, for the inspector to compare with the paper.
    public var printedLayout: [String]?
    /// The records of the payload that are present but cannot be read (UIC 918.3 records, DOSIPAS data blocks),
    /// whatever the verdict: listed for the inspector, never dropped.
    public var unreadableRecords: [UnreadableRecord] = []
    /// This inspection passed a single-use ticket at a gate: its first use, which the fleet learns from the upload.
    public var isFirstUse = false

    public init(
        id: InspectionID = .random(), source: SourceName, receivedAt: Date? = nil, symbology: Symbology?,
        payloadByteCount: Int, payloadDigest: [UInt8], verdict: Verdict, decidedBy: Decider = .offline,
        inspector: String? = nil, latency: Duration? = nil
    ) {
        self.id = id
        self.source = source
        self.receivedAt = receivedAt
        self.symbology = symbology
        self.payloadByteCount = payloadByteCount
        self.payloadDigest = payloadDigest
        self.verdict = verdict
        self.decidedBy = decidedBy
        self.inspector = inspector
        self.latency = latency
    }

    /// Whether the scan was inspected at all: a `refused` scan (no inspector logged in) is shown, not journaled.
    public var isJournaled: Bool { verdict.kind != .refused }
}

extension Duration {
    /// The duration in whole microseconds (rounded down), for JSON and metrics.
    public var wholeMicroseconds: Int {
        let parts = components
        return Int(parts.seconds) * 1_000_000 + Int(parts.attoseconds / 1_000_000_000_000)
    }
}
