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
    /// The verdict kind (`valid`, `expired`, `revoked`, `replayed`, …).
    public var verdict: String
    /// One sentence saying why.
    public var reason: String
    /// The signature check on its own.
    public var signature: String
    public var format: String?
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
    /// Warning codes, e.g. `seen-before`.
    public var warnings: [String]
    /// The warnings as sentences for the inspector, in the same order as `warnings`.
    public var warningMessages: [String]
    /// The inspector logged in when the scan was made (inspector mode).
    public var inspector: String?
    /// Which verdict decided: `offline` (this validator) or `online` (the validation API).
    public var decidedBy: String
    /// Microseconds from the scan's arrival to the journal write (the verdict is durable from then on).
    public var latencyMicros: Int

    /// Whether the ticket may be used: the only verdict that opens a gate.
    public var isValid: Bool { verdict == VerdictKind.valid.rawValue }

    public init(
        id: String, verdict: Verdict, device: String, symbology: Symbology?, payloadBytes: Int,
        inspector: String?, decidedBy: String = "offline", latencyMicros: Int = 0
    ) {
        self.id = id
        self.inspectedAt = verdict.inspectedAt
        self.device = device
        self.symbology = symbology?.rawValue
        self.payloadBytes = payloadBytes
        self.verdict = verdict.kind.rawValue
        self.reason = verdict.reason
        self.signature = verdict.signature.rawValue
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
        self.warnings = verdict.warnings.map(\.code)
        self.warningMessages = verdict.warnings.map(\.message)
        self.inspector = inspector
        self.decidedBy = decidedBy
        self.latencyMicros = latencyMicros
    }

    /// The event as one line of JSON (ISO 8601 dates, sorted keys), without the newline.
    public var jsonLine: String {
        String(decoding: (try? Self.encoder.encode(self)) ?? Data("{}".utf8), as: UTF8.self)
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
