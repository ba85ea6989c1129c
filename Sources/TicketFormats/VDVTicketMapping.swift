import FareCore
import Foundation

extension VDVEntitlement {
    /// The entitlement number as 4 big-endian bytes: the ticket id, which together with the KVP
    /// organisation is what the VDV blocklist names.
    public var ticketID: [UInt8] { Self.ticketID(entitlementNumber: entitlementNumber) }

    /// The ticket id (and revocation key, with the KVP organisation as issuer) of entitlement `number`.
    public static func ticketID(entitlementNumber number: UInt32) -> [UInt8] {
        [
            UInt8(truncatingIfNeeded: number >> 24), UInt8(truncatingIfNeeded: number >> 16),
            UInt8(truncatingIfNeeded: number >> 8), UInt8(truncatingIfNeeded: number),
        ]
    }

    /// Maps the ticket data onto the format-neutral `Ticket`.
    ///
    /// - format `vdv-ka`; issuer: the KVP organisation id in decimal (e.g. `57`); ticket id: the
    ///   entitlement number's 4 bytes; validity: begin read as the later and end as the earlier instant
    ///   of a repeated local hour (see `VDVDateTime`); issued: the transaction time, when stated.
    /// - product: the Deutschland-Ticket family by name, else `product <number>`; holder: the name and
    ///   date of birth from `DB` and the identification medium from `D7` (its number shortened), in one line and as
    ///   `holderCheck`; category, passengers and class from `DA`; zones: `<org>/<id>` for
    ///   plain tariff-point lists.
    /// - `details` (built when read), in display order: product, entitlement number, holder, date of birth, gender,
    ///   identification, class, passenger type, included travellers, price, area, organisations, sale,
    ///   SAM data, version.
    ///
    /// - Throws: `malformed` when the validity begin or end is not a date.
    public func ticket() throws(FormatError) -> Ticket {
        guard let from = validFrom.instant(.later) else {
            throw .malformed("the validity begin (bytes 10–13, \(validFrom)) is not a date")
        }
        guard let until = validUntil.instant(.earlier) else {
            throw .malformed("the validity end (bytes 14–17, \(validUntil)) is not a date")
        }
        let productName = product.description
        // `if let`s, not `flatMap(method)`: a method reference would copy the entitlement into a closure.
        var name: (whole: String, given: String?, family: String?)?
        var birth: UICDay?
        if let travellerSpan {
            let v = travellerSpan.valueOffset
            birth = VDVBCD.day(yyyymmdd: bytes[(v + 1)..<(v + 5)])
            name = Self.asciiName(bytes, travellerSpan) ?? traveller?.name.map(Self.nameParts)
            // A bare `#` names no one.
            if name?.whole.isEmpty == true { name = nil }
        }
        let medium = identificationMedium
        // The line grows in one string: it is written for every scan.
        var line = name?.whole ?? ""
        if let birth {
            line += line.isEmpty ? "born " : ", born "
            line += birth.description
        }
        if let medium {
            if !line.isEmpty { line += ", " }
            line += medium.description
        }
        let holder = line.isEmpty ? nil : line
        var holderCheck: TicketHolder?
        if name != nil || birth != nil || medium != nil {
            holderCheck = TicketHolder(
                name: name?.whole, givenName: name?.given, familyName: name?.family,
                dateOfBirth: birth.flatMap { HolderDate(year: $0.year, month: $0.month, day: $0.day) },
                idDocuments: medium.map { [$0.idDocument] } ?? [])
        }
        var passengers: Int?
        if let basicDataSpan {
            let included = VDVBasicData.includedTravellerCount(bytes, basicDataSpan)
            if included > 0 { passengers = 1 + included }
        }
        var zones: [String]?
        if let areaSpan { zones = Self.zones(bytes, areaSpan) }
        var category: String?
        if let basicDataSpan {
            category = VDVBasicData.category(passengerType: VDVBasicData.passengerType(bytes, basicDataSpan))
        }
        let sold = VDVTransaction.time(bytes, at: transactionOffset)
        let issuedAt = sold.isZero ? nil : sold.instant(.earlier)
        return Ticket(
            format: .vdvKA, issuer: IssuerID(String(kvpOrganisationID)), ticketID: TicketID(ticketID), validFrom: from,
            validUntil: until, issuedAt: issuedAt, product: productName, zones: zones,
            category: category,
            passengers: passengers, holder: holder, holderCheck: holderCheck,
            // Only the bytes are kept for the lines (read again when shown: they were read once already).
            deferredDetails: { [bytes, issuedAt] in
                (try? VDVEntitlement(parsing: bytes))?.detailLines(productName: productName, sold: issuedAt != nil)
                    ?? []
            }
        )
    }

    /// The name read straight from the bytes in the usual case, an ASCII `Given#Family` (trailing zero bytes left
    /// out): `Max Mustermann` with its parts; `nil` for any other, which `VDVTravellerName` reads. The same name
    /// either way.
    private static func asciiName(
        _ bytes: [UInt8], _ traveller: BERTLVSpan
    ) -> (whole: String, given: String?, family: String?)? {
        let nameStart = traveller.valueOffset + 5
        var nameEnd = traveller.end
        while nameEnd > nameStart, bytes[nameEnd - 1] == 0 { nameEnd -= 1 }
        var hash: Int?
        for index in nameStart..<nameEnd {
            let byte = bytes[index]
            guard byte < 0x80 else { return nil }
            if byte == UInt8(ascii: "#"), hash == nil { hash = index }
        }
        guard let hash else { return nil }
        let given = String(decoding: bytes[nameStart..<hash], as: UTF8.self)
        let family = String(decoding: bytes[(hash + 1)..<nameEnd], as: UTF8.self)
        return (
            given.isEmpty || family.isEmpty ? given + family : given + " " + family, given.isEmpty ? nil : given,
            family.isEmpty ? nil : family
        )
    }

    /// A decoded name with its parts: given and family for `Given#Family`; for an abbreviated one their first
    /// letters, all that is known for sure (`K3e@D4n`: `K`, `D`); none for a name in one piece, which may be
    /// either.
    private static func nameParts(_ name: VDVTravellerName) -> (whole: String, given: String?, family: String?) {
        switch name {
        case .split(let given, let family):
            (name.description, given.isEmpty ? nil : given, family.isEmpty ? nil : family)
        case .abbreviated(let given, let family): (name.description, given.first, family.first)
        case .whole(let text): (text, nil, nil)
        }
    }

    /// The zones of a plain tariff-point list, `<organisation>/<id>` (what `VDVArea.ids` reads), or `nil`.
    private static func zones(_ bytes: [UInt8], _ area: BERTLVSpan) -> [String]? {
        let start = area.valueOffset + 3
        guard let list = VDVArea.plainList(type: Int(bytes[area.valueOffset]), byteCount: area.end - start) else {
            return nil
        }
        let prefix = String(number(bytes, area.valueOffset + 1, 2)) + "/"
        var zones: [String] = []
        zones.reserveCapacity((area.end - start) / list.width)
        for offset in stride(from: start, to: area.end, by: list.width) {
            zones.append(prefix + String(VDVArea.id(bytes, at: offset, list)))
        }
        return zones
    }

    /// The `details` lines, in display order (see `ticket()`).
    private func detailLines(productName: String, sold: Bool) -> [(label: String, value: String)] {
        // Built with explicit `description`s and `+`: generic interpolation of CustomStringConvertible values
        // costs more than the rest of the mapping.
        var details: [(label: String, value: String)] = []
        details.reserveCapacity(18)
        details.append(("product", productName + " (" + String(productNumber) + ")"))
        details.append(("entitlement number", String(entitlementNumber)))
        if let traveller {
            if let name = traveller.name?.description { details.append(("holder", name)) }
            if let birth = traveller.dateOfBirth?.description { details.append(("date of birth", birth)) }
            if let gender = Self.genderText(traveller.gender) {
                details.append(("gender", gender))
            }
        }
        if let identificationMedium {
            details.append(("identification", identificationMedium.description))
        }
        if let basicData {
            details.append(("class", basicData.serviceClass.description))
            if basicData.passengerType != 0 {
                details.append(("passenger type", basicData.category ?? String(basicData.passengerType)))
            }
            if !basicData.includedTravellers.isEmpty {
                details.append(
                    (
                        "included travellers",
                        basicData.includedTravellers.map { "\($0.count) × type \($0.passengerType)" }
                            .joined(separator: ", ")
                    ))
            }
            if basicData.priceCents != 0 {
                let cents = basicData.priceCents % 100
                details.append(("price", "\(basicData.priceCents / 100).\(cents < 10 ? "0" : "")\(cents) EUR"))
            }
        }
        if let area {
            details.append(("area", area.description))
        }
        details.append(("sold by (KVP organisation)", String(kvpOrganisationID)))
        details.append(("product owner (PV organisation)", String(pvOrganisationID)))
        if sold {
            details.append(("sold", transaction.time.description + " (Europe/Berlin)"))
        }
        details.append(
            (
                "terminal",
                "type \(transaction.terminalType), number \(transaction.terminalNumber) of organisation \(transaction.terminalOrganisationID)"
            ))
        details.append(("SAM", "\(issue.samID), sequence \(issue.samSequenceNumber1)/\(issue.samSequenceNumber2)"))
        details.append(("VDV version", version.hexString))
        return details
    }

    private static func genderText(_ gender: Int) -> String? {
        switch gender {
        case 1: "male"
        case 2: "female"
        case 3: "diverse"
        default: nil
        }
    }
}
