import FareCore

/// What a payload shows beyond its verdict — the printed layout (U_TLAY), the FCB tree, the records that cannot be
/// read — from one decoding of the payload.
///
/// The verifier's decoding when it made a ticket: the ticket keeps what the format decoded (`Ticket.decodedContent`),
/// and everything here is read from that, never from the payload again. For a payload whose ticket the verifier did
/// not decode (a signature that failed, a key it does not have, a container that does not parse), the bytes are read
/// here, once, whatever the verdict: a forged ticket's layout is shown too, and a broken record is still named.
public struct PayloadDecoding: Sendable {
    /// What the payload was decoded into.
    private enum Source: Sendable {
        /// A UIC 918.3 ticket, as the verifier's mapping decoded it.
        case uicTicket(UICDecodedContent)
        /// A DOSIPAS ticket, as the verifier's mapping decoded it.
        case dosipasTicket(DOSIPASDecodedContent)
        /// A UIC 918.3 container read from the bytes (no ticket was made of it).
        case uicContainer(UICContainer)
        /// A DOSIPAS barcode read from the bytes (no ticket was made of it).
        case dosipasBarcode(DOSIPASBarcode)
        /// A UIC 918.3 container that cannot be taken apart: why.
        case unreadableContainer(String)
        /// A DOSIPAS barcode that cannot be taken apart: why.
        case unreadableBarcode(String)
        /// Another format, or a ticket without UIC records.
        case other
    }

    private let source: Source
    /// The verdict's format: which records count as unreadable for it (none for other formats).
    private let format: TicketFormat?
    /// The ticket's own list of unreadable records, when the verifier made a ticket.
    private let ticketUnreadable: [UnreadableRecord]?

    /// The decoding behind `verdict` (its ticket's), or the payload read once when the verdict has no ticket.
    public init(payload: [UInt8], verdict: Verdict) {
        format = verdict.format
        ticketUnreadable = verdict.ticket?.unreadableRecords
        let content = verdict.ticket?.decodedContent
        if let content = content as? UICDecodedContent {
            source = .uicTicket(content)
        } else if let content = content as? DOSIPASDecodedContent {
            source = .dosipasTicket(content)
        } else {
            // No ticket (or one of a format that keeps nothing of its records): the bytes, read once.
            source = Self.read(payload)
        }
    }

    /// The payload's UIC container or DOSIPAS barcode, read from the bytes once.
    private static func read(_ payload: [UInt8]) -> Source {
        if UIC918_3.isContainer(payload) {
            do {
                return .uicContainer(try UICContainer(parsing: payload))
            } catch {
                return .unreadableContainer(UIC918_3.asSentence(error.message))
            }
        }
        if DOSIPASBarcode.isBarcode(payload) {
            do {
                return .dosipasBarcode(try DOSIPASBarcode(decoding: payload))
            } catch {
                return .unreadableBarcode(UIC918_3.asSentence(error.message))
            }
        }
        return .other
    }

    /// The records of the payload that are present but cannot be read: the ticket's list when the verdict has a
    /// ticket (the mapping read every record already), else those of the UIC 918.3 container or DOSIPAS barcode
    /// read from the bytes, so that a ticket refused for a broken record still names it. Empty for other formats.
    public var unreadableRecords: [UnreadableRecord] {
        if let ticketUnreadable { return ticketUnreadable }
        switch (format, source) {
        case (.uic9183?, .uicContainer(let container)): return UIC918_3.unreadableRecords(in: container)
        case (.uic9189?, .dosipasBarcode(let barcode)): return DOSIPAS.unreadableBlocks(of: barcode)
        default: return []
        }
    }

    /// The printed layout (U_TLAY), or why there is none: never "no layout" for a ticket that has a U_TLAY record.
    public var printedLayout: PrintedLayout {
        switch source {
        case .uicTicket(let content): content.printedLayout
        case .uicContainer(let container): UIC918_3.layout(of: container)
        case .unreadableContainer(let reason): .containerUnreadable(reason)
        case .dosipasTicket, .dosipasBarcode, .unreadableBarcode, .other: .absent
        }
    }

    /// The FCB content (a UIC 918.3 container's U_FLEX record, a DOSIPAS barcode's rail ticket), or why there is
    /// none.
    public var fcb: FCBContent {
        switch source {
        case .uicTicket(let content): content.fcb
        case .dosipasTicket(let content): content.fcb
        case .uicContainer(let container): FCBContent(container: container)
        case .dosipasBarcode(let barcode): DOSIPAS.railTicketJSON(of: barcode)
        case .unreadableContainer(let reason), .unreadableBarcode(let reason): .payloadUnreadable(reason)
        case .other: .absent
        }
    }

}
