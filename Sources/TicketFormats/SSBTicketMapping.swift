import FareCore
import Foundation

extension ERASSB {
    /// Maps a decoded SSB ticket onto the format-neutral `Ticket`, its days placed by the inspection time.
    ///
    /// - issuer: the RICS code as the UIC path normalises it (`1179`); ticket id: the bytes of the ticket control
    ///   number (versions 1 and 2: the issuer PNR, else the reservation reference); issued: the issuing day.
    /// - Validity (see `SSBCalendar` for the year and the time zone): types 2 and 3 from 00:00 of the first day
    ///   to 23:59:59 of the last day, both counted from the issuing day; type 4 the same, from the issuing day when
    ///   the first day is 0 (open date); type 1 the departure day; versions 1 and 2 their first and last days;
    ///   types 21–31 none (their layout is the issuer's, so the verifier warns that validity was not checked).
    /// - product: the ticket type; passengers: adults + children; category `adult` or `child` when only one kind
    ///   travels; `details`: every decoded field in frame order, then the signature form.
    ///
    /// - Throws: `malformed` when the issuing day is no day of a year ending in the year digit (0, above 366, or
    ///   366 in years that are never leap years), naming the bits.
    public static func ticket(
        from ssb: SSBTicket, signatureForm: SSBSignatureForm? = nil, inspectedAt now: Date
    ) throws(FormatError) -> Ticket {
        var details: [(label: String, value: String)] = [
            ("SSB version", String(ssb.version)),
            ("issuer code", String(ssb.issuerCode)),
        ]
        if let keyID = ssb.keyID { details.append(("key id", String(keyID))) }
        if let type = ssb.ticketType { details.append(("ticket type", type.description)) }

        var validFrom: Date?
        var validUntil: Date?
        var issuedAt: Date?
        var ticketID: [UInt8] = []
        var product: String
        var passengers: Int?
        var category: String?

        if let common = ssb.common {
            details.append(("specimen", common.specimen ? "yes (test ticket)" : "no"))
            details.append(("adults", String(common.adults)))
            details.append(("children", String(common.children)))
            details.append(("class", common.travelClass.description))
            details.append(("ticket control number", common.ticketNumber))
            guard
                let issued = SSBCalendar.issuingDay(
                    yearInDecade: common.issuingYearInDecade, dayOfYear: common.issuingDayOfYear, inspectedAt: now)
            else {
                throw .malformed(
                    "the issuing day \(common.issuingDayOfYear) (bits 136–144) with year digit "
                        + "\(common.issuingYearInDecade) (bits 132–135) is no day of such a year")
            }
            details.append(
                ("issued", "\(issued) (year digit \(common.issuingYearInDecade), day \(common.issuingDayOfYear))"))
            issuedAt = issued.start
            ticketID = Array(common.ticketNumber.utf8)
            (passengers, category) = party(adults: common.adults, children: common.children)
            func window(_ first: Int, _ last: Int) -> (Date?, Date?) {
                (SSBCalendar.adding(first, to: issued)?.start, SSBCalendar.adding(last, to: issued)?.end)
            }
            func validity(_ first: Int, _ last: Int) -> String {
                let from = SSBCalendar.adding(first, to: issued).map(\.description) ?? "?"
                let until = SSBCalendar.adding(last, to: issued).map(\.description) ?? "?"
                return "\(from) – \(until) (days \(first)–\(last) after issue)"
            }
            switch ssb.payload {
            case .reservation(_, let body):
                product = "reservation (IRT/RES/BOA)"
                details.append(("ticket sub-type", String(body.subType)))
                details += stationDetails(body.stations, issuer: ssb.issuerCode)
                let departure = SSBCalendar.adding(body.departureDay, to: issued)
                let time = "\((body.departureTime / 60).twoDigits):\((body.departureTime % 60).twoDigits)"
                details.append(
                    (
                        "departure",
                        "\(departure.map(\.description) ?? "?") \(time) (day \(body.departureDay) after issue)"
                    ))
                details.append(("train", body.trainNumber))
                details.append(("coach", String(body.coach)))
                details.append(("seat", body.seat))
                details.append(("overbooked", body.overbooking ? "yes" : "no"))
                details.append(("information code", String(body.infoCode)))
                details.append(("text", body.text))
                (validFrom, validUntil) = (departure?.start, departure?.end)
            case .nonReservation(_, let body):
                product = "non-reservation ticket"
                details.append(("return journey", body.returnJourney ? "yes" : "no"))
                details.append(("valid", validity(body.firstDayOfValidity, body.lastDayOfValidity)))
                details += stationDetails(body.stations, issuer: ssb.issuerCode)
                details.append(("information code", String(body.infoCode)))
                details.append(("text", body.text))
                (validFrom, validUntil) = window(body.firstDayOfValidity, body.lastDayOfValidity)
            case .group(_, let body):
                product = "group ticket"
                details.append(("return journey", body.returnJourney ? "yes" : "no"))
                details.append(("valid", validity(body.firstDayOfValidity, body.lastDayOfValidity)))
                details += stationDetails(body.stations, issuer: ssb.issuerCode)
                details.append(("group leader", body.groupName))
                details.append(("countermark", String(body.counterMarkNumber)))
                details.append(("information code", String(body.infoCode)))
                details.append(("text", body.text))
                (validFrom, validUntil) = window(body.firstDayOfValidity, body.lastDayOfValidity)
            case .pass(_, let body):
                product = "\(body.kind) pass"
                details.append(("pass", body.kind.description))
                if body.firstDayOfValidity == 0 {
                    let until = SSBCalendar.adding(body.lastDayOfValidity, to: issued).map(\.description) ?? "?"
                    details.append(("valid", "open date, until \(until) (day \(body.lastDayOfValidity) after issue)"))
                } else {
                    details.append(("valid", validity(body.firstDayOfValidity, body.lastDayOfValidity)))
                }
                details.append(("travel days", String(body.travelDays)))
                details.append(("countries", body.countries.map(String.init).joined(separator: ", ")))
                details.append(("second page", body.secondPage ? "yes" : "no"))
                details.append(("information code", String(body.infoCode)))
                details.append(("text", body.text))
                (validFrom, validUntil) = window(body.firstDayOfValidity, body.lastDayOfValidity)
            case .nonUIC, .legacy:
                product = "ticket"
            }
        } else {
            switch ssb.payload {
            case .nonUIC(let body):
                product = "issuer-defined ticket type \(body.type)"
                details.append(("issuer-defined data (bits 27–463)", body.data.hexString))
            case .legacy(let body):
                product = "SSB version \(ssb.version) ticket"
                details += legacyDetails(body)
                let first = SSBCalendar.legacyDay(dayOfYear: body.firstDayOfValidity, inspectedAt: now)
                let last = first.flatMap { SSBCalendar.legacyDay(dayOfYear: body.lastDayOfValidity, onOrAfter: $0) }
                (validFrom, validUntil) = (first?.start, last?.end)
                details.append(
                    ("valid", "\(first.map(\.description) ?? "?") – \(last.map(\.description) ?? "?")"))
                (passengers, category) = party(adults: body.adults, children: body.children)
                let pnr = body.pnr.trimmingASCIIWhitespace()
                ticketID = pnr.isEmpty ? Array(String(body.reservationReference).utf8) : Array(pnr.utf8)
            case .reservation, .nonReservation, .group, .pass:
                product = "ticket"
            }
        }
        if let signatureForm { details.append(("signature", signatureForm.description)) }

        return Ticket(
            format: .eraSSB, issuer: IssuerID(String(ssb.issuerCode)), ticketID: TicketID(ticketID),
            validFrom: validFrom,
            validUntil: validUntil, issuedAt: issuedAt, product: product, category: category, passengers: passengers,
            details: details
        )
    }

    private static func party(adults: Int, children: Int) -> (Int, String?) {
        let category: String? =
            switch (adults, children) {
            case (1..., 0): "adult"
            case (0, 1...): "child"
            default: nil
            }
        return (adults + children, category)
    }

    private static func stationDetails(_ stations: SSBStations, issuer: Int) -> [(label: String, value: String)] {
        switch stations {
        case .numeric(let table, let departure, let arrival):
            return [("stations", "\(departure) → \(arrival) (\(table) code table)")]
        case .alphanumeric(let departure, let arrival, let departureNumber, let arrivalNumber):
            var rows: [(label: String, value: String)] = [("stations", "\(departure) → \(arrival) (codes)")]
            // DB and SNCB set the alphanumeric flag but write a number: show it as the UIC station code it is.
            if issuer == 1080 || issuer == 1088 {
                rows.append(
                    ("stations as numbers", "\(departureNumber % 10_000_000) → \(arrivalNumber % 10_000_000)"))
            }
            return rows
        }
    }

    private static func legacyDetails(_ body: SSBLegacyTicket) -> [(label: String, value: String)] {
        var rows: [(label: String, value: String)] = [
            ("RCT2 type", body.rct2Type ? "1" : "0"),
            ("tickets", String(body.numberOfTickets)),
            ("adults", String(body.adults)),
            ("children", String(body.children)),
            ("first day of validity", "day \(body.firstDayOfValidity) of the year"),
            ("last day of validity", "day \(body.lastDayOfValidity) of the year"),
            ("customer number", "\(body.customerNumber) (type \(body.customerNumberType ? 1 : 0))"),
            ("stations", "\(body.departureStation) → \(body.arrivalStation)"),
        ]
        let slot = body.departureTimeSlot
        let minutes = (slot - 1) * 30
        rows.append(
            (
                "departure time",
                (1...48).contains(slot) ? "\((minutes / 60).twoDigits):\((minutes % 60).twoDigits)" : "none (\(slot))"
            )
        )
        rows += [
            ("train", String(body.trainNumber)),
            ("reservation reference", String(body.reservationReference)),
            ("class", body.travelClass),
            ("coach", String(body.coach)),
            ("seat", String(body.seat)),
            ("berth", body.berth),
            ("overbooked", body.overbooking ? "yes" : "no"),
            ("PNR", body.pnr),
            ("ticket type", String(body.ticketType)),
            ("specimen bit", body.specimenBit ? "1" : "0"),
            ("via", body.via),
        ]
        if let carrier = body.carrierCode { rows.append(("carrier", String(carrier))) }
        if let reference = body.reference { rows.append(("reference", reference)) }
        return rows
    }

}
