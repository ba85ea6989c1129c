import FareCore
import Foundation

/// One inspection as the daemon's sinks see it: the verdict shown, with the ticket's facts and where it came from.
///
/// It is what goes out as a JSON line (stdout, the unix socket), as a server-sent event and into the gate
/// hook's environment, so its field names are a public interface: add fields, never rename them.
public struct VerdictEvent: Sendable, Codable, Equatable {
    /// The journal record id (UUID text): the same inspection in every sink and in the store.
    public var id: String
    /// When the verdict was given.
    public var inspectedAt: Date
    /// The scanner (configured name) or source the payload came from.
    public var device: String
    /// `qr`, `aztec`, …
    public var symbology: String?
    /// Payload size in bytes.
    public var payloadBytes: Int
    /// The verdict kind (`valid`, `expired`, `revoked`, `replayed`, `refused`, …).
    public var verdict: VerdictKind
    /// One sentence saying why.
    public var reason: String
    /// The signature check on its own.
    public var signature: SignatureStatus
    public var format: TicketFormat?
    public var issuer: String?
    public var keyId: String?
    public var ticketId: String?
    public var product: String?
    public var validFrom: Date?
    public var validUntil: Date?
    public var holder: String?
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
    /// The inspector logged in when the scan was made (inspector mode).
    public var inspector: String?
    /// Which verdict decided: `offline` (this validator) or `online` (the validation API).
    public var decidedBy: Decider
    /// Microseconds from the scan's arrival to the journal write (the verdict is durable from then on).
    public var latencyMicros: Int
    /// The UIC keys looked at for the signature and what came of each (why `unknown-key` or `invalid-signature`);
    /// absent for other formats.
    public var keys: [KeyConsideration]?
    /// With `clock-untrusted`: the trusted-time floor the device clock (`inspectedAt`) reads earlier than, and
    /// where it comes from (`release`, `key-bundle`, `revocations`, `server-reply`, `journal`); absent otherwise.
    public var clockFloor: Date?
    public var clockFloorSource: TrustedTimeSource?
    /// For a ticket on a published blocklist (VDV-KA, DTVG): the list and its version, the entry, its lock mode
    /// and what the inspector does (`refuse`, `keep-ticket`, `check-id`). Absent otherwise.
    public var revocation: BlocklistRevocation?

    /// Whether the ticket may be used: the only verdict that opens a gate.
    public var isValid: Bool { verdict == .valid }

    /// The event of `inspection`: the one mapping from an inspection to what the sinks see.
    public init(_ inspection: Inspection) {
        let verdict = inspection.verdict
        self.id = inspection.id
        self.inspectedAt = verdict.inspectedAt
        self.device = inspection.source
        self.symbology = inspection.symbology?.rawValue
        self.payloadBytes = inspection.payloadByteCount
        self.verdict = verdict.kind
        self.reason = verdict.reason
        self.signature = verdict.signature
        self.format = verdict.format
        let ticket = verdict.ticket
        self.issuer = ticket?.issuer ?? verdict.issuer
        self.keyId = verdict.keyID
        self.ticketId = ticket?.ticketIDHex
        self.product = ticket?.product
        self.validFrom = ticket?.validFrom
        self.validUntil = ticket?.validUntil
        self.holder = ticket?.holder
        self.category = ticket?.category
        self.passengers = ticket?.passengers
        self.zones = ticket?.zones
        let documents = ticket?.documents ?? []
        self.documents =
            documents.isEmpty
            ? nil
            : documents.map {
                Document(kind: $0.kind, summary: $0.summary, validFrom: $0.validFrom, validUntil: $0.validUntil)
            }
        self.layout = inspection.printedLayout
        self.unreadableRecords = inspection.unreadableRecords.isEmpty ? nil : inspection.unreadableRecords
        let details = ticket?.details ?? []
        self.details = details.isEmpty ? nil : details.map { Detail(label: $0.label, value: $0.value) }
        self.warnings = verdict.warnings.map(\.code)
        self.warningMessages = verdict.warnings.map(\.message)
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

    /// The event as one line of JSON (ISO 8601 dates, sorted keys), without the newline.
    public var jsonLine: String {
        String(decoding: (try? Self.encoder.encode(self)) ?? Data("{}".utf8), as: UTF8.self)
    }

    /// The event with its JSON lines (with and without holder data), encoded once here for every sink.
    public var published: PublishedVerdict {
        let redacted = withoutHolderData
        return PublishedVerdict(event: self, line: jsonLine, redactedLine: redacted == self ? nil : redacted.jsonLine)
    }

    /// The event without what identifies the passenger: the holder's name (and so a date of birth printed with
    /// it), the ticket's fields as `verify` prints them, and the printed layout, which carry the same. What is
    /// left says whether the ticket is good and why: enough for a gate's page, a log or a terminal.
    ///
    /// An unreadable record's reason quotes the bytes where it broke, which in a layout or a 0080BL can be a
    /// passenger's name: the quoted text is left out of the records and of their `unreadable-record` warnings.
    public var withoutHolderData: VerdictEvent {
        var event = self
        event.holder = nil
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
        public var validFrom: Date?
        public var validUntil: Date?
    }
}

/// A verdict event with its JSON line, encoded once per verdict: stdout, every socket client, the server-sent
/// events and the gate hook all get these same bytes.
public struct PublishedVerdict: Sendable {
    /// The event.
    public let event: VerdictEvent
    /// The event as one line of JSON, without the newline.
    public let line: String
    /// The line of ``VerdictEvent/withoutHolderData``, where it differs from ``line``.
    let redactedLine: String?

    init(event: VerdictEvent, line: String, redactedLine: String? = nil) {
        self.event = event
        self.line = line
        self.redactedLine = redactedLine
    }

    /// The line with holder data (`true`) or without it.
    public func line(holderData: Bool) -> String {
        holderData ? line : redactedLine ?? line
    }
}
