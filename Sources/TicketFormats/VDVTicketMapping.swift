import FareCore
import Foundation

extension VDVEntitlement {
    /// The entitlement number as 4 big-endian bytes: the ticket id, which together with the KVP
    /// organisation is what the VDV blocklist names.
    public var ticketID: [UInt8] { Self.ticketID(entitlementNumber: entitlementNumber) }

    /// The ticket id (and revocation key, with the KVP organisation as issuer) of entitlement `number`.
    public static func ticketID(entitlementNumber number: UInt32) -> [UInt8] {
        (0..<4).map { UInt8(truncatingIfNeeded: number >> (24 - 8 * UInt32($0))) }
    }

    /// Maps the ticket data onto the format-neutral `Ticket`.
    ///
    /// - format `vdv-ka`; issuer: the KVP organisation id in decimal (e.g. `57`); ticket id: the
    ///   entitlement number's 4 bytes; validity: begin read as the later and end as the earlier instant
    ///   of a repeated local hour (see `VDVDateTime`); issued: the transaction time, when stated.
    /// - product: the Deutschland-Ticket family by name, else `product <number>`; holder: the name and
    ///   date of birth from `DB`; category, passengers and class from `DA`; zones: `<org>/<id>` for
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
        var holder: String?
        if let traveller {
            let name = traveller.name?.description
            let birth = traveller.dateOfBirth?.description
            switch (name, birth) {
            case (let name?, let birth?): holder = name + ", born " + birth
            case (let name?, nil): holder = name
            case (nil, let birth?): holder = "born " + birth
            case (nil, nil): holder = nil
            }
        }
        if let identificationMedium {
            let medium = identificationMedium.description
            holder = holder.map { $0 + ", " + medium } ?? medium
        }
        var passengers: Int?
        if let basicData, !basicData.includedTravellers.isEmpty {
            passengers = 1 + basicData.includedTravellers.reduce(0) { $0 + $1.count }
        }
        let zones = area.flatMap { area in area.ids.map { ids in ids.map { "\(area.organisationID)/\($0)" } } }
        let issuedAt = transaction.time.isZero ? nil : transaction.time.instant(.earlier)
        return Ticket(
            format: .vdvKA, issuer: String(kvpOrganisationID), ticketID: ticketID, validFrom: from,
            validUntil: until, issuedAt: issuedAt, product: productName, zones: zones,
            category: basicData?.category, passengers: passengers, holder: holder,
            deferredDetails: { [self] in detailLines(productName: productName, sold: issuedAt != nil) }
        )
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
