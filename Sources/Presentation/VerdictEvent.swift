import FareCore
import Foundation
import Synchronization

/// One inspection as JSON: the verdict shown, with the ticket's facts and where it came from.
///
/// The one JSON form of an ``Inspection``, in two shapes (``Form``): the daemon's event, which goes out as a JSON
/// line (stdout, the unix socket), as a server-sent event and into the gate hook's environment; and the CLI's
/// report (`verify --json`, `demo --json`, `scanners listen --json`). Their field names are a public interface:
/// add fields, never rename them.
public struct VerdictEvent: Sendable, Codable, Equatable {
    /// Which of the two JSON objects this is: they share their fields but for a few each has always had alone.
    public enum Form: Sendable, Equatable {
        /// The daemon's event: with `id`, `device`, `documents`, `inspector`, `decidedBy` and `latencyMicros`.
        case event
        /// The CLI's report: with `source` (the event's `device`), `issuedAt`, `activatedAt`, `reactivations` and
        /// `expected`.
        case report
    }

    /// Which object this is; not itself encoded.
    public var form: Form = .event
    /// The inspection's id: the same inspection in every sink, in the journal and on the server (empty in a report).
    public var id: InspectionID
    /// When the verdict was given.
    public var inspectedAt: Date
    /// The scanner (configured name, else device path), camera or file the payload came from.
    public var device: SourceName
    /// `qr`, `aztec`, …
    public var symbology: Symbology?
    /// Payload size in bytes.
    public var payloadBytes: Int
    /// The verdict kind (`valid`, `expired`, `revoked`, `replayed`, `refused`, …).
    public var verdict: VerdictKind
    /// One sentence saying why.
    public var reason: String
    /// The signature check on its own.
    public var signature: SignatureStatus
    public var format: TicketFormat?
    public var issuer: IssuerID?
    /// The signing key's id (`keyId` in the JSON, as it has always been spelt there).
    public var keyID: KeyID?
    public var ticketId: String?
    public var product: String?
    public var validFrom: Date?
    public var validUntil: Date?
    public var holder: String?
    /// The holder check as fields, for comparing with the passenger's ID: `name`, `givenName`, `familyName`,
    /// `dateOfBirth` (`1986-05-17`, `1986-05` or `1986`, as precise as the ticket), `idDocuments` (`[{"kind":
    /// "id-card", "number": "L01X00T47"}]`, kinds as `IDDocumentKind` names them) and `note` (FC1 `h`, as written),
    /// each only when the ticket carries it. Holder data: present exactly where `holder` is.
    public var holderCheck: TicketHolder?
    public var category: String?
    public var passengers: Int?
    public var zones: [String]?
    /// The travel documents the ticket carries (FCB: open ticket, pass, reservation, …), each with its window.
    public var documents: [Document]?
    /// The printed layout (UIC U_TLAY) as text lines, as `verify --show-layout` draws it.
    public var layout: [String]?
    /// The records present but unreadable (UIC 918.3 records, DOSIPAS blocks): tag, version, offset, place and
    /// reason, as `verify --json` lists them; absent when there are none.
    public var unreadableRecords: [UnreadableRecord]?
    /// Every field the format carries, in display order, as `verify` prints them (DOSIPAS: both signature
    /// levels and the dynamic barcode's time; SSB: stations and class; VDV-KA: the entitlement's fields).
    public var details: [Detail]?
    /// Warning codes, e.g. `seen-before`.
    public var warnings: [String]
    /// The warnings as sentences for the inspector, in the same order as `warnings`.
    public var warningMessages: [String]
    /// The event's `reason` and `warningMessages` as the page translates them: each sentence's English template
    /// and the values it names (see ``Explanation``). In the event only; the CLI's report keeps its JSON as it was.
    public var explanation: Explanation?
    public var warningExplanations: [Explanation]?
    /// The inspector logged in when the scan was made (inspector mode).
    public var inspector: String?
    /// Which verdict decided: `offline` (this validator) or `online` (the validation API).
    public var decidedBy: Decider
    /// Microseconds from the scan's arrival to the journal write (the verdict is durable from then on).
    public var latencyMicros: Int
    /// The UIC and RSP6 keys looked at for the signature and what came of each (why `unknown-key` or
    /// `invalid-signature`); absent for other formats.
    public var keys: [KeyConsideration]?
    /// With `clock-untrusted`: the trusted-time floor the device clock (`inspectedAt`) reads earlier than, and
    /// where it comes from (`release`, `key-bundle`, `revocations`, `server-reply`, `journal`); absent otherwise.
    public var clockFloor: Date?
    public var clockFloorSource: TrustedTimeSource?
    /// For a ticket on a published blocklist (VDV-KA, DTVG): the list and its version, the entry, its lock mode
    /// and what the inspector does (`refuse`, `keep-ticket`, `check-id`). Absent otherwise.
    public var revocation: BlocklistRevocation?
    /// The report's own fields (`nil` in an event): when the ticket was issued and activated, its reactivations.
    public var issuedAt: Date?
    public var activatedAt: Date?
    public var reactivations: Int?
    /// The verdict the demo expected, in a report from `farecheck demo`.
    public var expected: String?

    /// Whether the ticket may be used: the only verdict that opens a gate.
    public var isValid: Bool { verdict == .valid }

    /// The event of `inspection`: the one mapping from an inspection to what the sinks see.
    public init(_ inspection: Inspection) {
        let verdict = inspection.verdict
        self.id = inspection.id
        self.inspectedAt = verdict.inspectedAt
        self.device = inspection.source
        self.symbology = inspection.symbology
        self.payloadBytes = inspection.payloadByteCount
        self.verdict = verdict.kind
        self.reason = verdict.reason
        self.signature = verdict.signature
        self.format = verdict.format
        let ticket = verdict.ticket
        self.issuer = ticket.map { $0.issuer } ?? verdict.issuer
        self.keyID = verdict.keyID
        self.ticketId = ticket?.ticketIDHex
        self.product = ticket?.product
        self.validFrom = ticket?.validFrom
        self.validUntil = ticket?.validUntil
        self.holder = ticket?.holder
        self.holderCheck = ticket?.holderCheck
        self.category = ticket?.category
        self.passengers = ticket?.passengers
        self.zones = ticket?.zones
        let documents = ticket?.documents ?? []
        self.documents =
            documents.isEmpty
            ? nil
            : documents.map {
                Document(
                    kind: $0.kind, summary: $0.summary, summaryExplanation: $0.summaryExplanation,
                    validFrom: $0.validFrom, validUntil: $0.validUntil)
            }
        self.layout = inspection.printedLayout
        self.unreadableRecords = inspection.unreadableRecords.isEmpty ? nil : inspection.unreadableRecords
        let details = ticket?.details ?? []
        self.details = details.isEmpty ? nil : details.map { Detail(label: $0.label, value: $0.value) }
        self.warnings = verdict.warnings.map(\.code)
        self.warningMessages = verdict.warnings.map(\.message)
        self.explanation = verdict.explanation
        self.warningExplanations = verdict.warnings.isEmpty ? nil : verdict.warnings.map(\.explanation)
        self.inspector = inspection.inspector
        self.decidedBy = inspection.decidedBy
        self.latencyMicros = inspection.latency?.wholeMicroseconds ?? 0
        self.keys = verdict.keys.isEmpty ? nil : verdict.keys
        if verdict.kind == .clockUntrusted, let floor = verdict.clockFloor {
            self.clockFloor = floor.instant
            self.clockFloorSource = floor.source
        }
        self.revocation = verdict.blocklistRevocation
    }

    /// The CLI's report of `inspection` (see ``Form/report``): the event's fields and the report's own.
    public static func report(_ inspection: Inspection) -> VerdictEvent {
        var report = VerdictEvent(inspection)
        report.form = .report
        report.explanation = nil
        report.warningExplanations = nil
        report.documents = report.documents?.map { document in
            var document = document
            document.summaryExplanation = nil
            return document
        }
        // The CLI draws the layout only when asked (`--show-layout`), and sets it then.
        report.layout = nil
        let ticket = inspection.verdict.ticket
        report.issuedAt = ticket?.issuedAt
        report.activatedAt = ticket?.activatedAt
        report.reactivations = ticket?.reactivations
        return report
    }

    private enum CodingKeys: String, CodingKey {
        case id, inspectedAt, device, symbology, payloadBytes, verdict, reason, signature, format, issuer, keyId
        case ticketId, product, validFrom, validUntil, holder, category, passengers, zones, documents, layout
        case holderCheck
        case unreadableRecords, details, warnings, warningMessages, inspector, decidedBy, latencyMicros, keys
        case clockFloor, clockFloorSource, revocation, issuedAt, activatedAt, reactivations, expected
        case explanation, warningExplanations
        /// The report's name for the event's `device`.
        case source
    }

    /// Reads an event line (or a report: its `source` is the `device`, and what it lacks of an event is empty).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if container.contains(.device) || !container.contains(.source) {
            form = .event
            id = try container.decode(InspectionID.self, forKey: .id)
            device = try container.decode(SourceName.self, forKey: .device)
            decidedBy = try container.decode(Decider.self, forKey: .decidedBy)
            latencyMicros = try container.decode(Int.self, forKey: .latencyMicros)
        } else {
            form = .report
            id = ""
            device = try container.decode(SourceName.self, forKey: .source)
            decidedBy = .offline
            latencyMicros = 0
        }
        documents = try container.decodeIfPresent([Document].self, forKey: .documents)
        inspector = try container.decodeIfPresent(String.self, forKey: .inspector)
        issuedAt = try container.decodeIfPresent(Date.self, forKey: .issuedAt)
        activatedAt = try container.decodeIfPresent(Date.self, forKey: .activatedAt)
        reactivations = try container.decodeIfPresent(Int.self, forKey: .reactivations)
        expected = try container.decodeIfPresent(String.self, forKey: .expected)
        inspectedAt = try container.decode(Date.self, forKey: .inspectedAt)
        symbology = try container.decodeIfPresent(Symbology.self, forKey: .symbology)
        payloadBytes = try container.decode(Int.self, forKey: .payloadBytes)
        verdict = try container.decode(VerdictKind.self, forKey: .verdict)
        reason = try container.decode(String.self, forKey: .reason)
        signature = try container.decode(SignatureStatus.self, forKey: .signature)
        format = try container.decodeIfPresent(TicketFormat.self, forKey: .format)
        issuer = try container.decodeIfPresent(IssuerID.self, forKey: .issuer)
        keyID = try container.decodeIfPresent(KeyID.self, forKey: .keyId)
        ticketId = try container.decodeIfPresent(String.self, forKey: .ticketId)
        product = try container.decodeIfPresent(String.self, forKey: .product)
        validFrom = try container.decodeIfPresent(Date.self, forKey: .validFrom)
        validUntil = try container.decodeIfPresent(Date.self, forKey: .validUntil)
        holder = try container.decodeIfPresent(String.self, forKey: .holder)
        holderCheck = try container.decodeIfPresent(TicketHolder.self, forKey: .holderCheck)
        category = try container.decodeIfPresent(String.self, forKey: .category)
        passengers = try container.decodeIfPresent(Int.self, forKey: .passengers)
        zones = try container.decodeIfPresent([String].self, forKey: .zones)
        layout = try container.decodeIfPresent([String].self, forKey: .layout)
        unreadableRecords = try container.decodeIfPresent([UnreadableRecord].self, forKey: .unreadableRecords)
        details = try container.decodeIfPresent([Detail].self, forKey: .details)
        warnings = try container.decode([String].self, forKey: .warnings)
        warningMessages = try container.decode([String].self, forKey: .warningMessages)
        explanation = try container.decodeIfPresent(Explanation.self, forKey: .explanation)
        warningExplanations = try container.decodeIfPresent([Explanation].self, forKey: .warningExplanations)
        keys = try container.decodeIfPresent([KeyConsideration].self, forKey: .keys)
        clockFloor = try container.decodeIfPresent(Date.self, forKey: .clockFloor)
        clockFloorSource = try container.decodeIfPresent(TrustedTimeSource.self, forKey: .clockFloorSource)
        revocation = try container.decodeIfPresent(BlocklistRevocation.self, forKey: .revocation)
    }

    /// The fields of ``form``, absent optionals left out.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch form {
        case .event:
            try container.encode(id, forKey: .id)
            try container.encode(device, forKey: .device)
            try container.encodeIfPresent(documents, forKey: .documents)
            try container.encodeIfPresent(inspector, forKey: .inspector)
            try container.encode(decidedBy, forKey: .decidedBy)
            try container.encode(latencyMicros, forKey: .latencyMicros)
        case .report:
            try container.encode(device, forKey: .source)
            try container.encodeIfPresent(issuedAt, forKey: .issuedAt)
            try container.encodeIfPresent(activatedAt, forKey: .activatedAt)
            try container.encodeIfPresent(reactivations, forKey: .reactivations)
            try container.encodeIfPresent(expected, forKey: .expected)
        }
        try container.encode(inspectedAt, forKey: .inspectedAt)
        try container.encodeIfPresent(symbology, forKey: .symbology)
        try container.encode(payloadBytes, forKey: .payloadBytes)
        try container.encode(verdict, forKey: .verdict)
        try container.encode(reason, forKey: .reason)
        try container.encode(signature, forKey: .signature)
        try container.encodeIfPresent(format, forKey: .format)
        try container.encodeIfPresent(issuer, forKey: .issuer)
        try container.encodeIfPresent(keyID, forKey: .keyId)
        try container.encodeIfPresent(ticketId, forKey: .ticketId)
        try container.encodeIfPresent(product, forKey: .product)
        try container.encodeIfPresent(validFrom, forKey: .validFrom)
        try container.encodeIfPresent(validUntil, forKey: .validUntil)
        try container.encodeIfPresent(holder, forKey: .holder)
        try container.encodeIfPresent(holderCheck, forKey: .holderCheck)
        try container.encodeIfPresent(category, forKey: .category)
        try container.encodeIfPresent(passengers, forKey: .passengers)
        try container.encodeIfPresent(zones, forKey: .zones)
        try container.encodeIfPresent(layout, forKey: .layout)
        try container.encodeIfPresent(unreadableRecords, forKey: .unreadableRecords)
        try container.encodeIfPresent(details, forKey: .details)
        try container.encode(warnings, forKey: .warnings)
        try container.encode(warningMessages, forKey: .warningMessages)
        try container.encodeIfPresent(explanation, forKey: .explanation)
        try container.encodeIfPresent(warningExplanations, forKey: .warningExplanations)
        try container.encodeIfPresent(keys, forKey: .keys)
        try container.encodeIfPresent(clockFloor, forKey: .clockFloor)
        try container.encodeIfPresent(clockFloorSource, forKey: .clockFloorSource)
        try container.encodeIfPresent(revocation, forKey: .revocation)
    }

    /// The event as one line of JSON (ISO 8601 dates, sorted keys), without the newline: the bytes ``encoder``
    /// writes, written by hand (``handWrittenJSONLine``).
    public var jsonLine: String { handWrittenJSONLine }

    /// The event with its JSON lines (with and without holder data), for every sink: each encoded once, when first
    /// asked for.
    public var published: PublishedVerdict { PublishedVerdict(event: self) }

    /// The event without what identifies the passenger: the holder's name (and so a date of birth printed with
    /// it) and the holder check, the ticket's fields as `verify` prints them, and the printed layout, which carry the same. What is
    /// left says whether the ticket is good and why: enough for a gate's page, a log or a terminal.
    ///
    /// An unreadable record's reason quotes the bytes where it broke, which in a layout or a 0080BL can be a
    /// passenger's name: the quoted text is left out of the records and of their `unreadable-record` warnings.
    public var withoutHolderData: VerdictEvent {
        var event = self
        event.holder = nil
        event.holderCheck = nil
        event.details = nil
        event.layout = nil
        event.unreadableRecords = unreadableRecords?.map { record in
            var record = record
            record.reason = Self.withoutQuotedText(record.reason)
            return record
        }
        for index in warnings.indices where warnings[index] == VerdictWarning.unreadableRecordCode {
            if index < event.warningMessages.count {
                event.warningMessages[index] = Self.withoutQuotedText(event.warningMessages[index])
            }
            if let explanations = event.warningExplanations, index < explanations.count {
                event.warningExplanations?[index] = explanations[index].mappingTexts(Self.withoutQuotedText)
            }
        }
        return event
    }

    /// `text` with what stands between double quotes replaced by an ellipsis (`is "Kim Berger"` → `is "…"`).
    static func withoutQuotedText(_ text: String) -> String {
        var result = ""
        var quoted = false
        for character in text {
            if character == "\"" {
                if quoted { result += "…\"" } else { result.append(character) }
                quoted.toggle()
            } else if !quoted {
                result.append(character)
            }
        }
        // An opening quote without its closing one: what followed it is left out as well.
        if quoted { result += "…" }
        return result
    }

    /// The encoder every sink uses, so that all of them print the same text.
    public static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    /// The decoder for lines the sinks wrote (tests, a local UI written in Swift).
    public static var decoder: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }
}

extension VerdictEvent {
    /// One field of the ticket, as `verify` prints it.
    public struct Detail: Sendable, Codable, Equatable {
        public var label: String
        public var value: String
    }

    /// One travel document, as the page lists it.
    public struct Document: Sendable, Codable, Equatable {
        /// `openTicket`, `pass`, `reservation`, `customerCard`, …
        public var kind: String
        /// Product, class, passengers, route.
        public var summary: String
        /// The summary as the page says it in its language (see `TicketDocument.summaryExplanation`); in the
        /// event only.
        public var summaryExplanation: Explanation?
        public var validFrom: Date?
        public var validUntil: Date?
    }
}

/// A verdict event with its JSON lines, each encoded once per verdict, by the first sink that asks for it: stdout,
/// every socket client, the server-sent events and the gate hook all get these same bytes, and a line no sink asks
/// for (the one without holder data, where no sink leaves it out) is never encoded.
public struct PublishedVerdict: Sendable {
    /// The event.
    public let event: VerdictEvent
    private let lines: EncodedLines

    init(event: VerdictEvent) {
        self.event = event
        self.lines = EncodedLines(event)
    }

    /// The event as one line of JSON, without the newline.
    public var line: String { lines.line(holderData: true) }

    /// The line with holder data (`true`) or without it (``VerdictEvent/withoutHolderData``).
    public func line(holderData: Bool) -> String { lines.line(holderData: holderData) }
}

/// The two JSON lines of one event, each encoded on first use: JSON encoding is most of what publishing costs.
private final class EncodedLines: Sendable {
    private let event: VerdictEvent
    private let encoded = Mutex<(full: String?, redacted: String?)>((nil, nil))

    init(_ event: VerdictEvent) { self.event = event }

    func line(holderData: Bool) -> String {
        encoded.withLock { encoded in
            if !holderData, let redacted = encoded.redacted { return redacted }
            let without = holderData ? nil : event.withoutHolderData
            if let without, without != event {
                let redacted = without.jsonLine
                encoded.redacted = redacted
                return redacted
            }
            // With holder data, or an event that holds none: the full line.
            let full = encoded.full ?? event.jsonLine
            encoded.full = full
            if !holderData { encoded.redacted = full }
            return full
        }
    }
}

extension Explanation {
    /// The explanation with each text it names (at any depth) passed through `transform`.
    func mappingTexts(_ transform: (String) -> String) -> Explanation {
        var copy = self
        copy.replaceArguments {
            switch $0 {
            case .text(let text): .text(transform(text))
            case .explanation(let inner): .explanation(inner.mappingTexts(transform))
            default: $0
            }
        }
        return copy
    }
}
