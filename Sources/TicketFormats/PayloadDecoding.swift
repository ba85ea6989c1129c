import FareCore

/// What a payload shows beyond its verdict — the printed layout (U_TLAY), the FCB tree, the records that cannot be
/// read — from one decoding of the payload.
///
/// The verifier's decoding when it made a ticket: the ticket keeps what the format decoded (`Ticket.decodedContent`),
/// and everything here is read from that, never from the payload again. For a payload whose ticket the verifier did
/// not decode (a signature that failed, a key it does not have), the container or barcode it took apart is read, and
/// for one that does not parse, why: a forged ticket's layout is shown too, and a broken record is still named.
/// `TicketVerifier.inspect` makes it, beside the verdict.
public struct PayloadDecoding: Sendable {
    /// What the payload was decoded into.
    private enum Source: Sendable {
        /// A ticket, as the verifier's mapping decoded it (read through `DecodedTicketContent`).
        case ticket(any DecodedTicketContent)
        /// A UIC 918.3 container, as the verifier took it apart (no ticket was made of it).
        case uicContainer(UICContainer)
        /// A DOSIPAS barcode, as the verifier took it apart (no ticket was made of it).
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

    /// The verifier's decoding behind `verdict`: its ticket's content when it made a ticket, else the payload as the
    /// verifier recognised it (`recognised`), or, when it could not, why (`failure`, for a payload whose header says
    /// UIC 918.3 or DOSIPAS). Nothing is decoded again.
    public init(verdict: Verdict, recognised: RecognisedPayload?, failure: String?, payload: [UInt8]) {
        format = verdict.format
        ticketUnreadable = verdict.ticket?.unreadableRecords
        if let content = verdict.ticket?.decodedContent {
            source = .ticket(content)
        } else {
            switch recognised {
            case .uic(let container)?: source = .uicContainer(container)
            case .dosipas(let barcode)?: source = .dosipasBarcode(barcode)
            case nil where failure != nil && UIC918_3.isContainer(payload):
                source = .unreadableContainer(UIC918_3.asSentence(failure ?? ""))
            case nil where failure != nil && DOSIPASBarcode.isBarcode(payload):
                source = .unreadableBarcode(UIC918_3.asSentence(failure ?? ""))
            default: source = .other
            }
        }
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
        case .ticket(let content): content.printedLayout
        case .uicContainer(let container): UIC918_3.layout(of: container)
        case .unreadableContainer(let reason): .containerUnreadable(reason)
        case .dosipasBarcode, .unreadableBarcode, .other: .absent
        }
    }

    /// The FCB content (a UIC 918.3 container's U_FLEX record, a DOSIPAS barcode's rail ticket), or why there is
    /// none.
    public var fcb: FCBContent {
        switch source {
        case .ticket(let content): content.fcb
        case .uicContainer(let container): FCBContent(container: container)
        case .dosipasBarcode(let barcode): DOSIPAS.railTicketJSON(of: barcode)
        case .unreadableContainer(let reason), .unreadableBarcode(let reason): .payloadUnreadable(reason)
        case .other: .absent
        }
    }

}
