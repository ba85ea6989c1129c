import FareCore
import Foundation

extension UIC918_3 {
    /// Maps a container onto the format-neutral `Ticket`.
    ///
    /// - issuer: the `U_HEAD` issuer code, else the FCB issuer (else its security provider), else the header's;
    ///   ticket id: the bytes of the `U_HEAD` ticket key, else the FCB PNR, else the first document's reference;
    ///   issued: the `U_HEAD` time.
    /// - From `0080BL`: validity from the first day of `S031` to the last second of `S032` (Europe/Berlin),
    ///   else from the earliest and latest days of the validity blocks; product `S001`; holder `S023`,
    ///   else `S028` (`Last#First` shown as `First Last`), with `S027` as ID (also as `holderCheck`, the ID's
    ///   kind `unstated`: the record does not name it); passengers and category
    ///   from `S009` (`adults-BahnCards-type`) and `S012` (children).
    /// - `details` (built when read): header, `U_HEAD`, the `0080BL` fields with labels, the layout's texts and every
    ///   record as `id version length`, in that order.
    ///
    /// - From `U_FLEX` (FCB v1.3, v2, v3), which decides where it and `0080BL` differ (each difference is
    ///   listed in `disagreements`): one `TicketDocument` per transport document, validity spanning their
    ///   windows (the verdict follows `Ticket.governingDocument(at:)`), product (first tariff description,
    ///   else product id), holder (name, date of birth, ID card; `holderCheck` from the same traveler, whenever
    ///   it names one), passengers and category from the first
    ///   document's tariffs, issuing time and PNR (the ticket id without `U_HEAD`); issuer, travelers and
    ///   each document's route, class, train, places and reference in `details`.
    ///
    /// Records missing, unknown or in a version farecheck does not decode leave their fields `nil`.
    ///
    /// Strict where validity is decided, liberal where a record only informs: a broken `U_HEAD`, `U_FLEX` or
    /// `0080BL` validity is an error; a `U_TLAY` that cannot be read, `0080BL` fields that break after its
    /// validity, and records in versions farecheck does not decode are listed in `unreadableRecords`.
    ///
    /// - Throws: `malformed` when a record that decides validity is broken, naming its offset.
    public static func ticket(from container: UICContainer) throws(FormatError) -> Ticket {
        try content(of: container).ticket
    }

    /// The ticket as `ticket(from:)` maps it, with the issuer quirks read on the way (the container's and the
    /// layout's), for the verifier to name.
    ///
    /// - Throws: `malformed` when a record that decides validity is broken, naming its offset.
    public static func content(of container: UICContainer) throws(FormatError) -> UICContent {
        let head = try decodeFirst(container, UICHead.recordID, UICHead.init(record:))
        let bl = try decodeFirst(container, UIC0080BL.recordID, UIC0080BL.init(record:))
        var validFrom: Date?
        var validUntil: Date?
        var product: String?
        var holder: String?
        var holderCheck: TicketHolder?
        var passengers: Int?
        var category: String?
        if let bl = bl.value {
            validFrom = (bl.validFromDay ?? bl.validityBlocks.map(\.firstDay).min())?.start
            validUntil = (bl.validUntilDay ?? bl.validityBlocks.map(\.lastDay).max())?.end
            product = nonEmpty(bl.value(1))
            holderCheck = Self.holderCheck(bl)
            holder = holderText(holderCheck)
            let children = bl.childCount
            if let group = bl.passengersAndBahnCard {
                passengers = group.adults + (children ?? 0)
                switch (group.adults, children ?? 0) {
                case (1..., 0): category = "adult"
                case (0, 1...): category = "child"
                default: category = nil
                }
            }
        }

        // U_FLEX (FCB) decides over 0080BL where both state something: it is the structured, newer content.
        var documents: [TicketDocument] = []
        var disagreements: [TicketDisagreement] = []
        let flex = try decodeFirst(container, UICFlex.recordID, UICFlex.ticket(record:))
        if let flex = flex.value {
            documents = flex.ticketDocuments
            let flexFrom = flex.validFrom
            let flexUntil = flex.validUntil
            if flexFrom != nil || flexUntil != nil {
                if validFrom != nil || validUntil != nil,
                    !sameDays(validFrom, flexFrom) || !sameEndDays(validUntil, flexUntil)
                {
                    disagreements.append(
                        TicketDisagreement(
                            subject: "validity", kept: "\(window(flexFrom, flexUntil)) (U_FLEX)",
                            overruled: "\(window(validFrom, validUntil)) (0080BL)"))
                }
                validFrom = flexFrom
                validUntil = flexUntil
            }
            let main = flex.mainDocument
            if let name = main?.productName {
                if let product, product != name {
                    disagreements.append(
                        TicketDisagreement(
                            subject: "product", kept: "\(name) (U_FLEX)", overruled: "\(product) (0080BL)"))
                }
                product = name
            }
            if let text = flex.holderText { holder = text }
            if let check = flex.holderCheck { holderCheck = check }
            if let count = main?.passengerCount {
                passengers = count
                category = flex.category
            }
        }

        // The layout only informs: when it cannot be read it is listed, and the ticket is judged without it.
        let layout = decodeInforming(container, UICLayout.recordID, UICLayout.init(record:))
        // The printed layout is what the passenger reads; where it states other days than FCB, FCB decides and
        // the inspector is told.
        if flex.value != nil, validFrom != nil || validUntil != nil, let texts = layout.value?.texts,
            let printed = printedValidity(texts),
            printed.first != berlinDay(validFrom) || !sameEndDays(printed.last.end, validUntil)
        {
            disagreements.append(
                TicketDisagreement(
                    subject: "validity", kept: "\(window(validFrom, validUntil)) (U_FLEX)",
                    overruled: "\(printed.first) – \(printed.last) (U_TLAY)"))
        }

        // Without U_HEAD the FCB booking code (else the first document's reference) is the ticket's id (revocations
        // need one), and the FCB issuer (else its security provider) the issuer, as for DOSIPAS: the DTVG blocklist
        // names such tickets so.
        let ticketID =
            head.value?.ticketKeyBytes ?? flex.value?.issuing.issuerPNR.map { Array($0.utf8) }
            ?? flex.value?.documents.lazy.compactMap(\.reference).first.map { Array("\($0)".utf8) } ?? []
        let flexIssuer = (flex.value?.issuing.issuer ?? flex.value?.issuing.securityProvider).map { "\($0)" }
        var ticket = Ticket(
            format: .uic9183, issuer: IssuerID(head.value?.issuerCode ?? flexIssuer ?? container.issuerCode),
            ticketID: TicketID(ticketID),
            validFrom: validFrom, validUntil: validUntil,
            issuedAt: head.value?.issuedAt ?? flex.value?.issuing.issuedAt,
            product: product, category: category, passengers: passengers, holder: holder, holderCheck: holderCheck,
            documents: documents,
            disagreements: disagreements,
            decodedContent: UICDecodedContent(container: container, head: head, bl: bl, flex: flex, layout: layout)
        )
        // The deciding records in a version not decoded (a broken one threw above), and with them the layout.
        let undecodedDeciding = [head.unreadable, bl.unreadable, flex.unreadable].compactMap { $0 }
        var unread = undecodedDeciding
        if let layoutUnreadable = layout.unreadable { unread.append(layoutUnreadable) }
        if let value = bl.value, let record = container.record(UIC0080BL.recordID),
            let partial = unreadable(value, record)
        {
            unread.append(partial)
        }
        // Rare: a second record of a tag already read (mapped from the first), checked only when there is one.
        if hasRepeatedTag(container.records) { unread += unreadableRepeats(in: container) }
        // A setter copies the ticket's storage: only for the rare ticket with a record that cannot be read.
        if !unread.isEmpty { ticket.unreadableRecords = unread.sorted { $0.offset < $1.offset } }
        return UICContent(
            ticket: ticket, quirks: container.quirks + (layout.value?.quirks ?? []),
            undecodedDecidingRecords: undecodedDeciding.sorted { $0.offset < $1.offset })
    }

    /// The records of `container` that are present but cannot be read, in order: each record farecheck decodes
    /// (`U_HEAD`, `0080BL`, `U_TLAY`, `U_FLEX`) that is broken or in a version it does not decode, and a `0080BL`
    /// whose fields break after its validity. What a ticket that maps lists in `Ticket.unreadableRecords`, and
    /// for one that does not, the records that broke it.
    public static func unreadableRecords(in container: UICContainer) -> [UnreadableRecord] {
        container.records.compactMap(unreadable(_:))
    }

    /// `record` listed as unreadable when it is one farecheck decodes and it cannot be read; `nil` otherwise.
    private static func unreadable(_ record: UICRecord) -> UnreadableRecord? {
        do throws(FormatError) {
            switch record.id {
            case UICHead.recordID: _ = try UICHead(record: record)
            case UICLayout.recordID: _ = try UICLayout(record: record)
            case UICFlex.recordID: _ = try UICFlex.ticket(record: record)
            case UIC0080BL.recordID: return unreadable(try UIC0080BL(record: record), record)
            default: break
            }
            return nil
        } catch {
            return unreadable(record, error)
        }
    }

    /// Whether two of `records` have one tag (no allocation: a ticket has a handful of records).
    private static func hasRepeatedTag(_ records: [UICRecord]) -> Bool {
        for first in records.indices {
            for second in records.indices where second > first && records[second].id == records[first].id {
                return true
            }
        }
        return false
    }

    /// The records after the first of their tag (`U_HEAD`, `0080BL`, `U_TLAY`, `U_FLEX`) that cannot be read: the
    /// ticket is mapped from the first of each, and a second one that breaks is listed all the same.
    private static func unreadableRepeats(in container: UICContainer) -> [UnreadableRecord] {
        var seen: Set<String> = []
        var found: [UnreadableRecord] = []
        // `unreadable(_:)` lists only the records farecheck decodes; the others give nil.
        for record in container.records where !seen.insert(record.id).inserted {
            if let listed = unreadable(record) { found.append(listed) }
        }
        return found
    }

    /// The records of a UIC 918.3 payload that are present but cannot be read (`unreadableRecords(in:)`), read
    /// from the bytes as scanned whatever the verdict; empty for another format or a container that does not
    /// parse (its verdict says why).
    public static func unreadableRecords(ofPayload payload: [UInt8]) -> [UnreadableRecord] {
        guard isContainer(payload), let container = try? UICContainer(parsing: payload) else { return [] }
        return unreadableRecords(in: container)
    }

    /// `record` listed as unreadable because of `error`.
    static func unreadable(_ record: UICRecord, _ error: FormatError) -> UnreadableRecord {
        UnreadableRecord(
            tag: record.id, version: record.version, offset: record.offset, reason: asSentence(error.message))
    }

    /// A `0080BL` record whose fields broke after its validity, listed; `nil` for one read whole.
    private static func unreadable(_ bl: UIC0080BL, _ record: UICRecord) -> UnreadableRecord? {
        guard let error = bl.unreadableFields else { return nil }
        let last = bl.fields.last.map { " after \($0.tagName)" } ?? ""
        return UnreadableRecord(
            tag: record.id, version: record.version, offset: record.offset,
            reason: "Its fields\(last) cannot be read (its validity can): \(asSentence(error.message))")
    }

    /// The `details` lines of a ticket, in display order (see `ticket(from:)`): built only when shown.
    static func detailLines(
        _ container: UICContainer, head: Decoded<UICHead>, bl: Decoded<UIC0080BL>, flex: Decoded<FCBTicket>,
        layout: Decoded<UICLayout>
    ) -> [(label: String, value: String)] {
        var details: [(label: String, value: String)] = [
            ("header version", container.version < 10 ? "0\(container.version)" : "\(container.version)"),
            ("issuer code", container.issuerCode),
            ("key id", container.keyID),
            (
                "signature field",
                "\(container.signatureForm), \(container.signature.count) bytes in a "
                    + "\(container.signatureFieldLength)-byte field"
            ),
        ]
        head.note.map { details.append($0) }
        if let head = head.value {
            details.append(("ticket key", head.ticketKey))
            details.append(("issued", issuedText(head.issuedAtText) + " (Europe/Berlin)"))
            if head.issuerCode != container.issuerCode { details.append(("U_HEAD issuer code", head.issuerCode)) }
            details.append(("language", "\(head.language) / \(head.additionalLanguage)"))
        }
        bl.note.map { details.append($0) }
        if let bl = bl.value {
            for (index, block) in bl.validityBlocks.enumerated() {
                let serial = block.serial.isEmpty ? "" : ", serial \(block.serial)"
                details.append(("validity block \(index + 1)", "\(block.firstDay) – \(block.lastDay)\(serial)"))
            }
            for field in bl.fields { details.append((field.label, field.value)) }
        }
        flex.note.map { details.append($0) }
        if let flex = flex.value { details += flex.detailLines }
        layout.note.map { details.append($0) }
        if let layout = layout.value {
            details.append(("layout", "\(layout.standard), \(layout.fields.count) fields (drawn by --show-layout)"))
            details.append(("layout text", layout.texts.joined(separator: " | ")))
        }
        details.append(("records", container.records.map(\.summary).joined(separator: ", ")))
        return details
    }

    /// Whether two instants fall on the same Berlin day (or are both absent): 0080BL states days only.
    private static func sameDays(_ lhs: Date?, _ rhs: Date?) -> Bool {
        switch (lhs, rhs) {
        case (nil, nil): true
        case (let lhs?, let rhs?): UICTime.localFields(of: lhs).day == UICTime.localFields(of: rhs).day
        default: false
        }
    }

    /// Whether an end of validity falls on the same Berlin day as `lhs`, or in the early hours of the next one:
    /// DB states "until 03:00 the next day" in FCB where 0080BL and the printed ticket name the day itself.
    private static func sameEndDays(_ lhs: Date?, _ rhs: Date?) -> Bool {
        guard let lhs, let rhs else { return lhs == nil && rhs == nil }
        let day = UICTime.localFields(of: lhs).day
        let end = UICTime.localFields(of: rhs)
        if end.day == day { return true }
        let next = UICTime.localFields(of: UICTime.date(day, hour: 12, minute: 0).addingTimeInterval(86_400)).day
        return end.day == next && end.hour < 6
    }

    private static func berlinDay(_ date: Date?) -> UICDay? { date.map { UICTime.localFields(of: $0).day } }

    /// The validity the printed layout states: the first layout text holding exactly two `DD.MM.YYYY` days
    /// (e.g. `Gültig vom 01.02.2025 bis 01.03.2025`), earlier first; `nil` when no text does.
    static func printedValidity(_ texts: [String]) -> (first: UICDay, last: UICDay)? {
        for text in texts where text.utf8.count >= 20 {  // shorter texts cannot hold two days
            let days =
                text.utf8.withContiguousStorageIfAvailable(dottedDays)
                ?? Array(text.utf8).withUnsafeBufferPointer(dottedDays)
            if days.count == 2 { return (min(days[0], days[1]), max(days[0], days[1])) }
        }
        return nil
    }

    /// Every `DD.MM.YYYY` day in `bytes`, read in place (this runs for every scan with U_FLEX and U_TLAY).
    private static func dottedDays(_ bytes: UnsafeBufferPointer<UInt8>) -> [UICDay] {
        func number(_ start: Int, _ count: Int) -> Int? {
            var value = 0
            for index in start..<(start + count) {
                let byte = bytes[index]
                guard byte >= 0x30, byte <= 0x39 else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            return value
        }
        var days: [UICDay] = []
        var index = 0
        while index + 10 <= bytes.count {
            if bytes[index + 2] == UInt8(ascii: "."), bytes[index + 5] == UInt8(ascii: "."),
                let day = number(index, 2), let month = number(index + 3, 2), let year = number(index + 6, 4),
                let date = UICDay(year: year, month: month, day: day)
            {
                days.append(date)
                index += 10
            } else {
                index += 1
            }
        }
        return days
    }

    /// `first – last` in Berlin days, `?` for an open side.
    private static func window(_ from: Date?, _ until: Date?) -> String {
        let first = from.map { "\(UICTime.localFields(of: $0).day)" } ?? "?"
        let last = until.map { "\(UICTime.localFields(of: $0).day)" } ?? "?"
        return "\(first) – \(last)"
    }

    /// A record as decoded for the mapping: its value, or the `details` line saying why it was not decoded and the
    /// record listed as unreadable.
    struct Decoded<Record: Sendable>: Sendable {
        var value: Record?
        var note: (label: String, value: String)?
        var unreadable: UnreadableRecord?
    }

    /// Decodes the first record with `id`, which decides validity; no value when there is none or its version is
    /// not supported (then a note for `details` and the record listed, since an unknown version is no reason to
    /// reject the ticket).
    ///
    /// - Throws: the record's `malformed` error.
    private static func decodeFirst<Record: Sendable>(
        _ container: UICContainer, _ id: String, _ decode: (UICRecord) throws(FormatError) -> Record
    ) throws(FormatError) -> Decoded<Record> {
        guard let record = container.record(id) else { return Decoded() }
        do {
            return Decoded(value: try decode(record))
        } catch {
            guard error.code == .unsupported else { throw error }
            return Decoded(note: (id, "version \(record.version) not decoded"), unreadable: unreadable(record, error))
        }
    }

    /// Decodes the first record with `id`, which only informs: a record that cannot be read (broken, or in a
    /// version not decoded) gives no value, a note for `details` and the record listed.
    private static func decodeInforming<Record: Sendable>(
        _ container: UICContainer, _ id: String, _ decode: (UICRecord) throws(FormatError) -> Record
    ) -> Decoded<Record> {
        guard let record = container.record(id) else { return Decoded() }
        do {
            return Decoded(value: try decode(record))
        } catch {
            let note = error.code == .unsupported ? "version \(record.version) not decoded" : "cannot be read"
            return Decoded(note: (id, note), unreadable: unreadable(record, error))
        }
    }

    /// A message as a sentence: capitalised, ending in a full stop.
    static func asSentence(_ text: String) -> String {
        guard let first = text.first else { return text }
        let body = first.uppercased() + text.dropFirst()
        return body.hasSuffix(".") ? body : body + "."
    }

    /// `DD.MM.YYYY HH:MM` from `DDMMYYYYHHMM`.
    private static func issuedText(_ digits: String) -> String {
        // Bytes, not Characters: the digits are ASCII and this runs for every scan.
        let c = Array(digits.utf8)
        guard c.count == 12 else { return digits }
        var text: [UInt8] = []
        text.reserveCapacity(16)
        for (index, byte) in c.enumerated() {
            switch index {
            case 2, 4: text.append(UInt8(ascii: "."))
            case 8: text.append(UInt8(ascii: " "))
            case 10: text.append(UInt8(ascii: ":"))
            default: break
            }
            text.append(byte)
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// The holder from `S023`, else `S028` (`Last#First`, so with the family and given names apart), with the ID
    /// number `S027` when there is one: the record does not say of which document, so its kind is `unstated`.
    private static func holderCheck(_ bl: UIC0080BL) -> TicketHolder? {
        var holder = TicketHolder(name: nonEmpty(bl.value(23)))
        if holder.name == nil, let raw = nonEmpty(bl.value(28)) {
            let parts = raw.split(separator: "#", maxSplits: 1).map { $0.trimmingASCIIWhitespace() }
            if parts.count == 2 {
                // People read `First Last`.
                holder.name = "\(parts[1]) \(parts[0])".trimmingASCIIWhitespace()
                holder.givenName = parts[1].isEmpty ? nil : parts[1]
                holder.familyName = parts[0].isEmpty ? nil : parts[0]
            } else {
                holder.name = raw
            }
        }
        if let id = nonEmpty(bl.value(27)) { holder.idDocuments = [IDDocument(kind: .unstated, number: id)] }
        return holder.nonEmpty
    }

    /// The holder line of `holderCheck(_:)`: the name, with `ID <S027>` after it when there is one.
    private static func holderText(_ holder: TicketHolder?) -> String? {
        guard let holder else { return nil }
        guard let id = holder.idDocuments.first?.number else { return holder.name }
        return holder.name.map { "\($0), ID \(id)" } ?? "ID \(id)"
    }

    private static func nonEmpty(_ text: String?) -> String? {
        guard let trimmed = text?.trimmingASCIIWhitespace(includingNUL: true), !trimmed.isEmpty
        else { return nil }
        return trimmed
    }
}

/// What the UIC 918.3 mapping decoded of a container, kept behind its ticket (`Ticket.decodedContent`): the
/// ticket's details, its printed layout and its FCB tree are read from it, never from the payload again.
public struct UICDecodedContent: DecodedTicketContent {
    let container: UICContainer
    let head: UIC918_3.Decoded<UICHead>
    let bl: UIC918_3.Decoded<UIC0080BL>
    let flex: UIC918_3.Decoded<FCBTicket>
    let layout: UIC918_3.Decoded<UICLayout>

    public func detailLines() -> [(label: String, value: String)] {
        UIC918_3.detailLines(container, head: head, bl: bl, flex: flex, layout: layout)
    }

    /// The printed layout as `UIC918_3.layout(of:)` tells it, from the layout the mapping decoded.
    public var printedLayout: PrintedLayout {
        if let value = layout.value { return .drawn(value.renderedLines()) }
        if let unreadable = layout.unreadable { return .unreadable(unreadable) }
        return .absent
    }

    /// The U_FLEX record's FCB tree as `FCBContent(container:)` tells it, from the record the mapping decoded.
    public var fcb: FCBContent {
        if let value = flex.value { return .decoded(value.data.json) }
        if let unreadable = flex.unreadable { return .unreadable(unreadable) }
        return .absent
    }
}

/// A UIC 918.3 container read into a ticket, with the issuer quirks read on the way.
public struct UICContent: Sendable {
    /// The ticket, as `UIC918_3.ticket(from:)` maps it (its `unreadableRecords` list what could not be read).
    public var ticket: Ticket
    /// How the container and its layout depart from the standard, in order: the `#UT` header, the record
    /// headers, then the layout.
    public var quirks: [IssuerQuirk]
    /// The records that decide validity (`U_HEAD`, `0080BL`, `U_FLEX`) present in a version farecheck does not
    /// decode, in order. Such a ticket cannot be judged on its validity: it is never valid (the verifier says
    /// `unsupported`, naming the record). Also listed in the ticket's `unreadableRecords`.
    public var undecodedDecidingRecords: [UnreadableRecord] = []
}
