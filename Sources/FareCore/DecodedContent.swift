import Foundation

/// What a payload shows of its printed layout (U_TLAY): the grid, or why there is none.
public enum PrintedLayout: Sendable, Hashable {
    /// The layout drawn (`UICLayout.renderedLines`); empty for a layout without fields.
    case drawn([String])
    /// The payload has a U_TLAY record that cannot be read, even allowing for the issuer quirks farecheck knows.
    case unreadable(UnreadableRecord)
    /// The payload is a UIC 918.3 container that cannot be taken apart (the verdict says the same): why.
    case containerUnreadable(String)
    /// The payload is not a UIC 918.3 container, or has no U_TLAY record.
    case absent

    /// The drawn lines, `nil` when nothing is drawn.
    public var lines: [String]? {
        if case .drawn(let lines) = self { return lines }
        return nil
    }
}

/// The FCB content of a payload as `verify --show-fcb` shows it: the decoded tree, or why there is none.
public enum FCBContent: Sendable, Hashable {
    /// Every decoded field as JSON (`FCBData.json`).
    case decoded(String)
    /// The payload has FCB content (a U_FLEX record, a DOSIPAS FCB block) that cannot be read.
    case unreadable(UnreadableRecord)
    /// The payload is a UIC 918.3 container or DOSIPAS barcode that cannot be taken apart (the verdict says the
    /// same): why.
    case payloadUnreadable(String)
    /// The payload has no FCB content.
    case absent
}

/// What a format decoded from a payload to make a ticket, kept behind the ticket (`Ticket.decodedContent`).
///
/// The decoding belongs to the format's module; here it builds the ticket's `details` when they are read, and says
/// what the payload shows beyond the ticket (its printed layout, its FCB tree), so that whoever shows them reads the
/// verifier's one decoding, through this protocol, without knowing the format's types and without decoding the
/// payload again.
public protocol DecodedTicketContent: Sendable {
    /// The format-specific lines of `Ticket.details`, in display order.
    func detailLines() -> [(label: String, value: String)]
    /// The printed layout (UIC U_TLAY), or why there is none; `.absent` for a format without one.
    var printedLayout: PrintedLayout { get }
    /// The FCB content (a U_FLEX record, a DOSIPAS rail ticket), or why there is none; `.absent` for a format
    /// without one.
    var fcb: FCBContent { get }
}

extension DecodedTicketContent {
    public var printedLayout: PrintedLayout { .absent }
    public var fcb: FCBContent { .absent }
}
