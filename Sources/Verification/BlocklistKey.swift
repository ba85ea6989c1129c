import FareCore
import TicketFormats

/// What a published blocklist entry must name for it to match a ticket: derived from the ticket alone.
///
/// - VDV-KA tickets: the VDV-KA blocklist's entitlement entries (type `B`), by the selling (KVP) organisation id
///   and the entitlement number, as the ticket carries them (`Ticket.issuer` in decimal, `Ticket.ticketID` as the
///   number's four bytes). A static barcode carries no user medium number, so type `A` entries match nothing.
/// - UIC 918.3 (`#UT`, with or without U_FLEX) and UIC 918.9 (DOSIPAS) tickets: the DTVG UIC blocklist, by the
///   distributing RICS code and the ticket id as verification reads them: U_HEAD's issuer and ticket key, else
///   the FCB issuer and ticket id (PNR, else the first document's reference). RICS codes compare as numbers
///   (`0080` = `80`), ticket ids byte for byte.
public enum BlocklistKey: Sendable, Hashable {
    /// A VDV-KA entitlement: organisation id and entitlement number.
    case vdvEntitlement(organisation: UInt16, number: UInt32)
    /// A UIC ticket: RICS code (as a number) and ticket id bytes.
    case dtvgTicket(rics: UInt32, ticketID: [UInt8])

    /// The key a blocklist entry must have to match `ticket`; `nil` for formats no blocklist covers, and for a
    /// ticket without the parts (an issuer that is not a number, no ticket id).
    public init?(ticket: Ticket) {
        switch ticket.format {
        case .vdvKA:
            guard let organisation = UInt16(ticket.issuer.rawValue), ticket.ticketID.count == 4 else { return nil }
            let number = ticket.ticketID.bytes.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            self = .vdvEntitlement(organisation: organisation, number: number)
        case .uic9183, .uic9189:
            guard !ticket.ticketID.isEmpty, let rics = Self.ricsNumber(ticket.issuer.rawValue) else { return nil }
            self = .dtvgTicket(rics: rics, ticketID: ticket.ticketID.bytes)
        case .fc1, .eraSSB, .ukRSP6:
            return nil
        }
    }

    /// The entry's own key, for an entry that can match a ticket (a VDV user medium cannot: `nil`).
    public init?(entry: BlocklistEntry) {
        switch entry {
        case .vdv(let entry):
            guard entry.item == .entitlement else { return nil }
            self = .vdvEntitlement(organisation: entry.organisation, number: entry.number)
        case .dtvg(let entry):
            self = .dtvgTicket(rics: entry.rics, ticketID: Array(entry.ticketID.utf8))
        }
    }

    /// The list this key is looked up in.
    public var list: BlocklistKind {
        switch self {
        case .vdvEntitlement: .vdvKA
        case .dtvgTicket: .dtvgUIC
        }
    }

    /// A RICS code as a number (`0080` → 80): digits only, as `UICKeyList.normalizedCode` matches them.
    static func ricsNumber(_ issuer: String) -> UInt32? {
        let code = UICKeyList.normalizedCode(issuer)
        guard !code.isEmpty, code.utf8.count <= 9, code.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
            return nil
        }
        return UInt32(code)
    }
}
