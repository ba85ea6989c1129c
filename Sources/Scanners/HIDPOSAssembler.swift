import FareCore
import Foundation

/// Reassembles HID POS scans (usage page 0x8C) from scanned-data reports, following the continuation flag.
///
/// Each report carries up to `dataCapacity` bytes; a scan longer than that arrives as several reports,
/// all but the last with the continuation flag set. The payload is delivered only when the last one
/// arrives: a scan whose continuation never comes is dropped, never delivered in part.
///
/// When the AIM identifier announces ECI output (`]Q2`, `]z3`, `]d4`, …) the scanner has escaped the data
/// (`\nnnnnn` designators, doubled backslashes); the escaping is undone so the payload is the symbol's bytes.
public struct HIDPOSAssembler: HIDReportAssembler {
    /// Where the fields of a report sit.
    public var layout: HIDPOSReportLayout
    /// How long to wait for the next report of a continued scan before dropping it. Measured on the
    /// report times given to ``accept(report:at:)``, so a recorded stream assembles the same way.
    public var continuationTimeout: TimeInterval

    private var pending: [UInt8] = []
    private var pendingSymbology: Symbology?
    private var pendingAnnouncesECI = false
    private var pendingReports = 0
    private var lastReportAt: Date?

    /// Makes an assembler for one layout.
    ///
    /// - Parameter continuationTimeout: Scanners send the reports of a scan back to back (a few ms apart);
    ///   one second leaves room for a busy USB bus and still frees the next scan quickly.
    public init(layout: HIDPOSReportLayout, continuationTimeout: TimeInterval = 1.0) {
        self.layout = layout
        self.continuationTimeout = continuationTimeout
    }

    /// Takes one input report; see ``HIDReportAssembler/accept(report:at:)``.
    public mutating func accept(report: [UInt8], at time: Date) -> HIDReportOutcome {
        guard let parsed = layout.parse(report) else { return HIDReportOutcome() }
        var outcome = HIDReportOutcome()
        if pendingReports > 0, let lastReportAt, time.timeIntervalSince(lastReportAt) > continuationTimeout {
            outcome.dropped = abandon(
                reason: "the report after report \(pendingReports) did not come within "
                    + "\(Int(continuationTimeout * 1000)) ms"
            )
        }
        if let declared = parsed.declaredLength, declared > parsed.capacity {
            // A length beyond the report means the layout does not fit this device: saying so beats
            // delivering bytes from the wrong place.
            outcome.rejection =
                "report says \(declared) data bytes but has room for \(parsed.capacity); "
                + "the report layout does not match this scanner"
            if let dropped = abandon(reason: "a report of the scan did not match the layout") {
                outcome.dropped = dropped
            }
            return outcome
        }
        if pendingReports == 0 && parsed.data.isEmpty && !parsed.continues {
            return outcome  // An empty report (some scanners send one after each scan): nothing to deliver.
        }
        guard pending.count + parsed.data.count <= maximumAssembledPayload else {
            outcome.dropped = abandon(reason: "the scan grew past \(maximumAssembledPayload) bytes without ending")
            return outcome
        }
        pending += parsed.data
        if pendingReports == 0 {
            pendingSymbology = parsed.symbology
            pendingAnnouncesECI = parsed.aim?.announcesECI ?? false
        }
        pendingReports += 1
        lastReportAt = time
        guard !parsed.continues else { return outcome }
        let payload = pendingAnnouncesECI ? AIMIdentifier.removingECIEscapes(pending) : pending
        outcome.scan = AssembledScan(payload: payload, symbology: pendingSymbology ?? .other, completedAt: time)
        reset()
        return outcome
    }

    /// Drops a scan whose last report has not arrived; see ``HIDReportAssembler/abandon(reason:)``.
    public mutating func abandon(reason: String) -> DroppedScan? {
        guard pendingReports > 0 else { return nil }
        let dropped = DroppedScan(reason: reason, receivedBytes: pending.count)
        reset()
        return dropped
    }

    private mutating func reset() {
        pending = []
        pendingSymbology = nil
        pendingAnnouncesECI = false
        pendingReports = 0
        lastReportAt = nil
    }
}
