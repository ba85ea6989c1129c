import FareCore
import Foundation

/// The `U_FLEX` record of a UIC 918.3 container: FCB content (UIC 918.9) in the version the record names.
public enum UICFlex {
    /// The record id.
    public static let recordID = "U_FLEX"

    /// Decodes a `U_FLEX` record.
    ///
    /// - Throws: `unsupported` for a record version other than `13`/`01`, `02`, `03`; `malformed` naming the
    ///   record's byte offset in the inflated data, the bit offset counted from the first bit of its body, and
    ///   the field path.
    public static func ticket(record: UICRecord) throws(FormatError) -> FCBTicket {
        FCBTicket(try data(record: record))
    }

    /// Decodes a `U_FLEX` record's FCB content without reading it into types: what `verify --show-fcb` shows.
    ///
    /// - Throws: as `ticket(record:)`.
    public static func data(record: UICRecord) throws(FormatError) -> FCBData {
        guard let version = FCBVersion(uflexRecordVersion: record.version) else {
            throw .unsupported(
                "U_FLEX version \(record.version) at byte \(record.offset) is not supported (only 13, 01, 02, 03)")
        }
        return try FCBData(
            decoding: record.body, version: version,
            subject: "the U_FLEX record (\(version)) at byte \(record.offset) of the inflated data, whose body "
                + "starts at byte \(record.offset + UICRecord.headerLength),"
        )
    }
}

extension FCBTicket {
    /// The earliest start of validity among the documents (`nil` when none states one).
    public var validFrom: Date? {
        var earliest: Date?
        for document in documents {
            if let date = document.validFrom?.date, earliest.map({ date < $0 }) ?? true { earliest = date }
        }
        return earliest
    }

    /// The latest end of validity among the documents (`nil` when none states one).
    public var validUntil: Date? {
        var latest: Date?
        for document in documents {
            if let date = document.validUntil?.date, latest.map({ date > $0 }) ?? true { latest = date }
        }
        return latest
    }

    /// The document that names the product and passengers: the first with a product name or tariffs.
    public var mainDocument: FCBDocument? {
        documents.first { $0.productName != nil || !$0.tariffs.isEmpty }
    }

    /// `adult`, `child` or `senior` when every tariff of the main document is for that passenger type (an
    /// absent type counts as adult, FCB's first value), else `nil`.
    public var category: String? {
        // One pass, no set: tariffs of one type, or nothing to say.
        guard let tariffs = mainDocument?.tariffs, let type = tariffs.first.map({ $0.passengerType ?? .adult }),
            tariffs.allSatisfy({ ($0.passengerType ?? .adult) == type })
        else { return nil }
        switch type {
        case .adult: return "adult"
        case .child: return "child"
        case .senior: return "senior"
        default: return nil
        }
    }

    /// The transport documents as format-neutral `TicketDocument`s, with their windows and one-line summaries.
    public var ticketDocuments: [TicketDocument] {
        documents.map { document in
            TicketDocument(
                kind: document.kind.description, validFrom: document.validFrom?.date,
                validUntil: document.validUntil?.date, summary: document.summaryExplanation
            )
        }
    }

    /// The holder for the inspector: name, date of birth and ID card, e.g. `Max Mustermann, born 2001-01-01`.
    public var holderText: String? {
        guard let holder else { return nil }
        var text = ""
        if let name = holder.name { text.appendPart(name) }
        if let born = holder.dateOfBirth { text.appendPart("born ", born) }
        if let card = holder.idCard { text.appendPart("ID card ", card) }
        if let passport = holder.passportID { text.appendPart("passport ", passport) }
        return text.isEmpty ? nil : text
    }

    /// The holder check as fields, from the same traveler as `holderText` (see `FCBTraveler.holderCheck`).
    public var holderCheck: TicketHolder? { holder?.holderCheck }

    /// The lines `Ticket.details` shows for this FCB content, in order.
    public var detailLines: [(label: String, value: String)] {
        var lines: [(label: String, value: String)] = [("FCB version", version.rawValue)]
        let issuerParts = [issuing.issuerName, issuing.issuer.map { "RICS \($0)" }].compactMap { $0 }
        if !issuerParts.isEmpty { lines.append(("FCB issuer", issuerParts.joined(separator: ", "))) }
        if let provider = issuing.securityProvider { lines.append(("FCB security provider", "\(provider)")) }
        lines.append(("FCB issued", Self.text(issuing.issuedAt)))
        if let pnr = issuing.issuerPNR { lines.append(("PNR", pnr)) }
        if issuing.isSpecimen { lines.append(("specimen", "yes: a test ticket, not valid for travel")) }
        if !issuing.isActivated { lines.append(("activated", "no: the ticket still needs activation")) }
        for (index, traveler) in travelers.enumerated() {
            var parts = [traveler.name ?? "(no name)"]
            if let born = traveler.dateOfBirth { parts.append("born \(born)") }
            if let type = traveler.passengerType { parts.append(type.rawValue) }
            if let card = traveler.idCard { parts.append("ID card \(card)") }
            if traveler.isTicketHolder { parts.append("ticket holder") }
            lines.append(("traveler \(index + 1)", parts.joined(separator: ", ")))
        }
        if let groupName { lines.append(("group", groupName)) }
        for (index, document) in documents.enumerated() {
            let number = documents.count > 1 ? " \(index + 1)" : ""
            lines.append(("document\(number)", "\(document.kind): \(document.summary)"))
            if let from = document.validFrom {
                lines.append(("document\(number) valid from", Self.text(from)))
            }
            if let until = document.validUntil {
                lines.append(("document\(number) valid until", Self.text(until)))
            }
            if let reference = document.reference { lines.append(("document\(number) reference", "\(reference)")) }
            if let product = document.productID { lines.append(("document\(number) product id", "\(product)")) }
            if let card = document.cardID { lines.append(("document\(number) card", "\(card)")) }
            if let region = document.regionDescription { lines.append(("document\(number) region", region)) }
            if let train = document.train { lines.append(("document\(number) train", "\(train)")) }
            if let places = document.places { lines.append(("document\(number) places", places)) }
        }
        return lines
    }

    /// `2025-02-27 10:14 (UTC+01:00) = 2025-02-27T09:14:00Z`: the ticket's own local time and the instant.
    static func text(_ instant: FCBInstant) -> String {
        let hour = instant.minute / 60
        let minute = instant.minute % 60
        let zone: String
        if let offset = instant.utcOffset {
            // FCB's sign is the opposite of an ISO zone: UTC = local + offset × 15 min.
            let minutes = -offset * 15
            let sign = minutes < 0 ? "-" : "+"
            zone = "UTC\(sign)\((abs(minutes) / 60).twoDigits):\((abs(minutes) % 60).twoDigits)"
        } else {
            zone = "local time"
        }
        let second = instant.second == 0 ? "" : ":\(instant.second.twoDigits)"
        return "\(instant.day) \(hour.twoDigits):\(minute.twoDigits)\(second) (\(zone)) = \(text(instant.date))"
    }

    /// `2025-02-27T09:14:00Z`, as `Date.formatted(.iso8601)` writes it (whole seconds, UTC), without Foundation's
    /// formatter, which costs several microseconds a call and runs for every date of every scanned ticket.
    static func text(_ date: Date) -> String {
        let seconds = Int(date.timeIntervalSince1970.rounded(.down))
        var days = seconds / 86_400
        var secondOfDay = seconds % 86_400
        if secondOfDay < 0 {
            days -= 1
            secondOfDay += 86_400
        }
        let (year, month, day) = UICTime.civil(fromDays: days)
        guard (0...9999).contains(year) else { return date.formatted(.iso8601) }
        var text: [UInt8] = []
        text.reserveCapacity(20)
        func digits(_ value: Int, _ count: Int) {
            var divisor = 1
            for _ in 1..<count { divisor *= 10 }
            while divisor > 0 {
                text.append(UInt8(ascii: "0") + UInt8(value / divisor % 10))
                divisor /= 10
            }
        }
        digits(year, 4)
        text.append(UInt8(ascii: "-"))
        digits(month, 2)
        text.append(UInt8(ascii: "-"))
        digits(day, 2)
        text.append(UInt8(ascii: "T"))
        digits(secondOfDay / 3_600, 2)
        text.append(UInt8(ascii: ":"))
        digits(secondOfDay / 60 % 60, 2)
        text.append(UInt8(ascii: ":"))
        digits(secondOfDay % 60, 2)
        text.append(UInt8(ascii: "Z"))
        return String(decoding: text, as: UTF8.self)
    }
}

extension FCBDocument {
    /// One line: product (and `productIdIA5` where the name is another text), class, a customer card's number,
    /// passengers, route or region, e.g.
    /// `Deutschland-Ticket, 2nd class, 1 adult, Mannheim (8000244) – Reutlingen (8000314)`,
    /// `Super Sparpreis, ICE Fahrkarte, 2nd class, 1 adult, …` or
    /// `BahnCard 25 (2. Klasse), 2nd class, card 7081411234567890`.
    public var summary: String { summaryExplanation.english }

    /// ``summary`` as the page says it in its language: the ticket's texts (product, stations, places) as they are,
    /// farecheck's words as templates (`2nd class`, `class {0}`, `card {0}`, `{0} {1}` for a count and a passenger
    /// type, `{0} – {1}`, `at {0}`, `to {0}`, `train {0}`), joined by ``Explanation/list(_:)``.
    public var summaryExplanation: Explanation {
        var parts: [Explanation.Argument] = []
        let name = productName
        if let name { parts.append(.text(name)) }
        // `productIdIA5` names the product in words (DB: `ICE Fahrkarte`); a `productIdNum` is a tariff number,
        // which the details list.
        if case .text(let id)? = productID, !id.isEmpty, id != name { parts.append(.text(id)) }
        if let travelClass {
            switch travelClass {
            case .first: parts.append(.explanation("1st class"))
            case .second: parts.append(.explanation("2nd class"))
            case .notApplicable: break
            default: parts.append(.explanation("class \(travelClass.rawValue)"))
            }
        }
        if let cardID { parts.append(.explanation("card \(cardID.description)")) }
        var passengers: Explanation?
        for tariff in tariffs {
            let one: Explanation = "\(tariff.numberOfPassengers) \(Self.passengerWord(tariff.passengerType))"
            passengers = passengers.map { "\($0) + \(one)" } ?? one
        }
        if let passengers { parts.append(.explanation(passengers)) }
        switch (origin, destination) {
        case (let from?, let to?): parts.append(.explanation("\(from.description) – \(to.description)"))
        case (let from?, nil): parts.append(.explanation("at \(from.description)"))
        case (nil, let to?): parts.append(.explanation("to \(to.description)"))
        case (nil, nil): break
        }
        if let train { parts.append(.explanation("train \(train.description)")) }
        if let places { parts.append(.text(places)) }
        return Explanation.list(parts) ?? .verbatim(kind.description)
    }

    /// A passenger type's word, a template of its own (the type's FCB name; `passenger` when none is given).
    static func passengerWord(_ type: FCBPassengerType?) -> Explanation {
        switch type {
        case .adult: "adult"
        case .senior: "senior"
        case .child: "child"
        case .youth: "youth"
        case .dog: "dog"
        case .bicycle: "bicycle"
        case .freeAddonPassenger: "freeAddonPassenger"
        case .freeAddonChild: "freeAddonChild"
        case nil: "passenger"
        }
    }
}

extension String {
    /// Appends `part` as one more part of a list separated by `, `.
    fileprivate mutating func appendPart(_ part: String) {
        if !isEmpty { self += ", " }
        self += part
    }

    /// Appends `first` and `second` together as one more part (two arguments, not a variadic list: that would
    /// be an array each time).
    fileprivate mutating func appendPart(_ first: String, _ second: String) {
        appendPart(first)
        self += second
    }
}
