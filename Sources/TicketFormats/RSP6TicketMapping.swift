import FareCore
import Foundation

/// UK National Rail e-tickets (RSP6): from the recovered bit field to the format-neutral `Ticket`.
public enum RSP6 {
    /// Maps a recovered RSP6 ticket onto `Ticket`.
    ///
    /// - issuer: the issuer id (`TT`); ticket id: the bytes of the reference as printed, issuer id first
    ///   (`TTDNQL4XHVK`), which revocations and replay use (`farecheck revoke --issuer TT --ticket-key
    ///   TTDNQL4XHVK`); issued: the purchase time when the ticket has purchase data.
    /// - Validity: `RSP6Ticket.validFrom` to `validUntil` (the travel day to the last day of validity, UK time).
    /// - product: the fare label (the three-letter fare code, e.g. `SDS`), else the ticket type code, so that a
    ///   gate's single-use products can name UK fares; holder: the passenger's name when the ticket carries one
    ///   (the holder check's `name`, as printed, title included);
    ///   `details`: every field in plain words, the codes kept beside them (docs/uk-rsp6.md).
    public static func ticket(from ticket: RSP6Ticket, barcode: RSP6Barcode) -> Ticket {
        let validity = ticket.validity
        return Ticket(
            format: .ukRSP6, issuer: IssuerID(barcode.issuerID),
            ticketID: TicketID(Array(barcode.ticketReference.utf8)),
            validFrom: validity.from, validUntil: validity.until, issuedAt: ticket.purchase?.purchasedAt,
            product: ticket.fareLabel ?? ticket.ticketType, holder: ticket.passengerName,
            holderCheck: ticket.passengerName.map { TicketHolder(name: $0) },
            deferredDetails: { details(of: ticket, barcode: barcode) })
    }

    /// The ticket's fields as labelled lines, in the order an inspector reads them.
    public static func details(of ticket: RSP6Ticket, barcode: RSP6Barcode) -> [(label: String, value: String)] {
        var lines: [(label: String, value: String)] = [
            ("ticket reference", barcode.ticketReference),
            ("issuer id", barcode.issuerID),
        ]
        let day = dayText(ticket.travelDay)
        if ticket.departureTimeIsSet {
            let fields = UKTime.localFields(of: ticket.departure)
            lines.append(
                ("travel", "\(day) \(fields.hour.twoDigits):\(fields.minute.twoDigits) UK time (booked departure)"))
        } else {
            lines.append(("travel", "\(day) (UK)"))
        }
        if let purchase = ticket.purchase {
            let days = max(1, purchase.daysOfValidity)
            lines.append(
                (
                    "days of validity",
                    days == 1 ? "1 (the travel day only)" : "\(days) (until \(dayText(lastDay(of: ticket))))"
                ))
        } else {
            lines.append(("days of validity", "not stated (no purchase data)"))
        }
        lines.append(("origin", ticket.origin.map { "NLC \($0)" } ?? "not stated"))
        lines.append(("destination", ticket.destination.map { "NLC \($0)" } ?? "not stated"))
        if let type = ticket.ticketType { lines.append(("ticket type", type)) }
        if let label = ticket.fareLabel { lines.append(("fare label", label)) }
        lines.append(
            (
                "railcard",
                ticket.discountCode == 0 ? "none" : "discount code \(ticket.discountCode): ask for the railcard"
            ))
        lines.append(("route", ticket.routeCode == 0 ? "any permitted" : "route code \(ticket.routeCode)"))
        lines.append(("passenger name", ticket.passengerName ?? "not stated"))
        for (index, reservation) in ticket.reservations.enumerated() {
            var text = "\(reservation.trainOperator) \(reservation.trainNumber)"
            if let coach = reservation.coach { text += ", coach \(coach)" }
            if let seat = reservation.seat { text += ", seat \(seat)" }
            lines.append(("reservation \(index + 1)", text))
        }
        if let purchase = ticket.purchase {
            let fields = UKTime.localFields(of: purchase.purchasedAt)
            lines.append(
                ("purchased", "\(dayText(fields.day)) \(fields.hour.twoDigits):\(fields.minute.twoDigits) UK time"))
            lines.append(("price", pounds(purchase.pricePence)))
            if let reference = purchase.reference { lines.append(("purchase reference", reference)) }
        }
        if let retailer = ticket.retailer { lines.append(("retailer", retailer)) }
        lines.append(("coupon type", String(ticket.couponType)))
        if ticket.passengerID != 0 { lines.append(("passenger id", String(ticket.passengerID))) }
        if ticket.passengerGender != 0 { lines.append(("passenger gender code", String(ticket.passengerGender))) }
        if let restriction = ticket.restrictionCode { lines.append(("restriction code", restriction)) }
        if ticket.limitedDurationCode != 0 {
            lines.append(("limited-duration code", String(ticket.limitedDurationCode)))
        }
        if let text = ticket.freeText { lines.append(("text", text)) }
        lines.append(("RSP6 version", "\(barcode.version) (ticket version \(ticket.version))"))
        return lines
    }

    /// The last day of validity: the travel day plus the days of validity, less one.
    static func lastDay(of ticket: RSP6Ticket) -> UICDay {
        UKTime.localFields(of: ticket.validUntil).day
    }

    /// A day as UK tickets and ISO 8601 write it, `2022-12-28`.
    public static func dayText(_ day: UICDay) -> String {
        "\(day.year)-\(day.month.twoDigits)-\(day.day.twoDigits)"
    }

    /// `£1.65`.
    static func pounds(_ pence: Int) -> String { "£\(pence / 100).\((pence % 100).twoDigits)" }

}
