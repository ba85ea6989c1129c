import FareCore
import Foundation

/// `IntercodeIssuingData`: the French issuing data in the FCB issuing extension (`_RRRRII1`, `+FRII1`).
public struct IntercodeIssuingData: Sendable, Hashable {
    /// `intercodeVersion`.
    public var version: Int
    /// `intercodeInstanciation`.
    public var instanciation: Int
    /// `networkId` as hex text, the way networks are named (e.g. `250915`).
    public var networkID: String
    /// `productRetailer.retailChannel`, e.g. `mobileApplication`.
    public var retailChannel: String?
    /// `productRetailer.retailerId`.
    public var retailerID: Int?
    /// `productRetailer.retailTraceability` (an extension addition).
    public var retailTraceability: String?

    /// The extension ids that carry Intercode issuing data: `_RRRRII1`, `+FRII1`, and the registered `+FRII`
    /// and `_RRRRII`.
    public static func isIssuingExtension(_ id: String) -> Bool {
        id == "+FRII1" || id == "+FRII" || (id.hasPrefix("_") && (id.hasSuffix("II1") || id.hasSuffix("II")))
    }

    /// Decodes the extension's octets.
    ///
    /// - Throws: `malformed` naming the bit offset and field.
    public init(decoding bytes: [UInt8]) throws(FormatError) {
        let value = try PERDecoder.decode(
            bytes, as: DOSIPASSchema.intercodeIssuingData, subject: "the Intercode issuing data")
        guard let record = value.record else { throw .malformed("the Intercode issuing data is not a sequence") }
        version = record["intercodeVersion"]?.integer ?? 0
        instanciation = record["intercodeInstanciation"]?.integer ?? 0
        networkID = (record["networkId"]?.octets ?? []).hexString
        let retailer = record["productRetailer"]?.record
        let channels = [
            "smsTicket", "mobileApplication", "webSite", "ticketOffice", "depositaryTerminal", "onBoardTerminal",
            "ticketVendingMachine",
        ]
        if let index = retailer?["retailChannel"]?.enumeratedIndex {
            retailChannel = index < channels.count ? channels[index] : "channel \(index)"
        }
        retailerID = retailer?["retailerId"]?.integer
        retailTraceability = retailer?["retailTraceability"]?.text
    }
}

extension FCBTicket {
    /// The Intercode issuing data of `issuingDetail.extension`, when it has one that decodes.
    public var intercodeIssuing: IntercodeIssuingData? {
        guard let extensionRecord = data.root["issuingDetail"]?.record?["extension"]?.record,
            let id = extensionRecord["extensionId"]?.text, IntercodeIssuingData.isIssuingExtension(id),
            let bytes = extensionRecord["extensionData"]?.octets
        else { return nil }
        return try? IntercodeIssuingData(decoding: bytes)
    }
}

/// UIC 918.9 DOSIPAS barcodes: `DOSIPASBarcode` takes one apart, `ticket(from:at:)` maps it onto a `Ticket`.
public enum DOSIPAS {
    /// Maps a barcode onto the format-neutral `Ticket`.
    ///
    /// - The rail ticket is the first FCB block of the level-1 data sequence (FCB 1.3, 2 or 3), mapped as for
    ///   `U_FLEX`: one `TicketDocument` per transport document, validity spanning their windows, product,
    ///   holder (the line and `holderCheck`), passengers, category, issuing time; the ticket id is the FCB `issuerPNR`, else the first
    ///   document's reference; the issuer is the FCB issuer, else its security provider, else the header's.
    /// - `details` (built when read): header version, security provider and key id, algorithms, the data sequence, the level-1
    ///   and level-2 signatures as carried (the verifier adds how each was judged), the level-2 key, the
    ///   dynamic content (generation time, duration, end of validity), Intercode issuing data, then the FCB
    ///   lines.
    ///
    /// - Parameter reference: the latest instant the barcode can have been generated (the inspection time plus
    ///   the clock-skew tolerance), which fixes the year of an FDC1 time stamp (`DOSIPASTimeStamp.date(notAfter:)`).
    /// - Throws: `malformed` when the FCB block or the dynamic content is broken, naming the bit offset.
    public static func ticket(from barcode: DOSIPASBarcode, at reference: Date) throws(FormatError) -> Ticket {
        try content(of: barcode, at: reference).ticket
    }

    /// The ticket (as `ticket(from:at:)` maps it), the FCB rail ticket it came from, and the barcode's
    /// generation time and allowed age: everything the verifier reads, decoded once.
    ///
    /// - Parameters:
    ///   - reference: the latest instant the barcode can have been generated (see `ticket(from:at:)`).
    ///   - more: lines to show after the barcode's own `details` (the verifier's judgement of each signature
    ///     level), built when read like them: the same as `Ticket.appendDetails(_:)` afterwards, without making
    ///     the ticket again.
    /// - Throws: `malformed` when the FCB block or the dynamic content is broken, naming the bit offset.
    public static func content(
        of barcode: DOSIPASBarcode, at reference: Date,
        appendingDetails more: (@Sendable () -> [(label: String, value: String)])? = nil
    ) throws(FormatError) -> DOSIPASContent {
        let level1 = barcode.level1
        var flex: FCBTicket?
        if let (version, block) = level1.railTicketBlock {
            flex = try FCBTicket(
                decoding: block.data, version: version, subject: "the \(block.formatText) rail ticket data")
        }

        let dynamic = try barcode.dynamicContent()
        let freshness = barcode.freshness(of: dynamic, notAfter: reference, issuingDay: flex?.issuing.issuingDay)
        let decoded = DOSIPASDecodedContent(
            barcode: barcode, dynamic: dynamic, freshness: freshness, railTicket: flex, moreDetails: more)

        guard let flex else {
            let issuer = level1.securityProvider.map { UICKeyList.normalizedCode("\($0)") } ?? ""
            let ticket = Ticket(format: .uic9189, issuer: IssuerID(issuer), ticketID: [], decodedContent: decoded)
            return DOSIPASContent(ticket: ticket, railTicket: nil, freshness: freshness)
        }
        let issuerCode = flex.issuing.issuer ?? flex.issuing.securityProvider ?? level1.securityProvider
        let issuer = issuerCode.map { UICKeyList.normalizedCode("\($0)") } ?? ""
        let ticketID =
            flex.issuing.issuerPNR.map { Array($0.utf8) }
            ?? flex.documents.lazy.compactMap(\.reference).first.map { Array("\($0)".utf8) } ?? []
        let main = flex.mainDocument
        let ticket = Ticket(
            format: .uic9189, issuer: IssuerID(issuer), ticketID: TicketID(ticketID), validFrom: flex.validFrom,
            validUntil: flex.validUntil, issuedAt: flex.issuing.issuedAt, product: main?.productName,
            category: main?.passengerCount == nil ? nil : flex.category, passengers: main?.passengerCount,
            holder: flex.holderText, holderCheck: flex.holderCheck, documents: flex.ticketDocuments,
            decodedContent: decoded
        )
        return DOSIPASContent(ticket: ticket, railTicket: flex, freshness: freshness)
    }

    /// The `details` lines, in display order (see `ticket(from:at:)`): built only when shown.
    static func detailLines(
        _ barcode: DOSIPASBarcode, dynamic: DOSIPASDynamicContent?, freshness: DOSIPASFreshness?,
        railTicket flex: FCBTicket?
    ) -> [(label: String, value: String)] {
        let level1 = barcode.level1
        var details: [(label: String, value: String)] = [
            ("header", "\(barcode.headerVersion.rawValue) (DOSIPAS header v\(barcode.headerVersion == .u1 ? 1 : 2))")
        ]
        let provider = level1.securityProvider.map { "\($0)" } ?? "(none)"
        details.append(("security provider", provider))
        details.append(("key id", "\(level1.keyID ?? 0)\(level1.keyID == nil ? " (not stated)" : "")"))
        details.append(
            ("data", level1.dataSequence.map { "\($0.formatText) (\($0.data.count) bytes)" }.joined(separator: ", ")))
        if let algorithm = level1.level1SigningAlgorithm { details.append(("level 1 algorithm", "\(algorithm)")) }
        if let algorithm = level1.level1KeyAlgorithm { details.append(("level 1 key algorithm", "\(algorithm)")) }
        details.append(
            (
                "level 1 signature",
                barcode.level1Signature.map { "\($0.count) bytes" } ?? "none: the barcode is unsigned"
            ))
        if let key = level1.level2PublicKey {
            let form: String
            switch key.first {
            case 0x02, 0x03: form = "compressed point"
            case 0x04: form = "uncompressed point"
            case 0x30: form = "SubjectPublicKeyInfo"
            default: form = "raw key"
            }
            let algorithm = level1.level2KeyAlgorithm.map { ", \($0)" } ?? ""
            details.append(("level 2 key", "\(form), \(key.count) bytes\(algorithm)"))
        }
        if let algorithm = level1.level2SigningAlgorithm { details.append(("level 2 algorithm", "\(algorithm)")) }
        if let block = barcode.level2Data {
            details.append(("level 2 data", "\(block.formatText) (\(block.data.count) bytes)"))
        }
        details.append(("level 2 signature", barcode.level2Signature.map { "\($0.count) bytes" } ?? "none"))

        if let freshness {
            details.append(("barcode generated", FCBTicket.text(freshness.generatedAt)))
            if let duration = freshness.duration { details.append(("barcode valid for", "\(duration) s")) }
        }
        if let end = level1.endOfValidity { details.append(("barcode end of validity", FCBTicket.text(end))) }
        if let validityDuration = level1.validityDuration, barcode.level2Data == nil {
            details.append(("barcode valid for", "\(validityDuration) s"))
        }
        if case .fdc1(let content)? = dynamic, let app = content.mobileAppID {
            details.append(("mobile app", app))
        }
        guard let flex else { return details }
        if let intercode = flex.intercodeIssuing {
            var parts = ["network \(intercode.networkID)", "version \(intercode.version).\(intercode.instanciation)"]
            if let channel = intercode.retailChannel { parts.append(channel) }
            if let retailer = intercode.retailerID { parts.append("retailer \(retailer)") }
            details.append(("Intercode", parts.joined(separator: ", ")))
        }
        details += flex.detailLines
        return details
    }
}

extension DOSIPAS {
    /// The blocks of `barcode` that are present but cannot be read: its rail ticket (the first FCB block of the
    /// level-1 data) and its level-2 dynamic content, when their bits break their format. Both decide (validity,
    /// freshness), so the verdict of such a barcode is `malformed`; the list says which block and why.
    public static func unreadableBlocks(of barcode: DOSIPASBarcode) -> [UnreadableRecord] {
        var unreadable: [UnreadableRecord] = []
        if let index = barcode.level1.dataSequence.firstIndex(where: { $0.format.fcbVersion != nil }) {
            let block = barcode.level1.dataSequence[index]
            do throws(FormatError) {
                _ = try railTicketData(block)
            } catch {
                unreadable.append(
                    UnreadableRecord(
                        tag: block.formatText, version: "", offset: index, place: .level1Data,
                        reason: UIC918_3.asSentence(error.message)))
            }
        }
        do throws(FormatError) {
            _ = try barcode.dynamicContent()
        } catch {
            unreadable.append(
                UnreadableRecord(
                    tag: barcode.level2Data?.formatText ?? "", version: "", offset: 0, place: .level2Data,
                    reason: UIC918_3.asSentence(error.message)))
        }
        return unreadable
    }

    /// The unreadable blocks of a DOSIPAS payload (`unreadableBlocks(of:)`), read from the bytes as scanned
    /// whatever the verdict; empty for another format or a barcode whose header does not decode.
    public static func unreadableBlocks(ofPayload payload: [UInt8]) -> [UnreadableRecord] {
        guard DOSIPASBarcode.isBarcode(payload), let barcode = try? DOSIPASBarcode(decoding: payload) else { return [] }
        return unreadableBlocks(of: barcode)
    }

    /// Every decoded field of the barcode's rail ticket (the first FCB block of the level-1 data) as JSON, the
    /// way `FCBData.json` shows a U_FLEX record: `.absent` without an FCB block.
    public static func railTicketJSON(of barcode: DOSIPASBarcode) -> FCBContent {
        guard let index = barcode.level1.dataSequence.firstIndex(where: { $0.format.fcbVersion != nil }) else {
            return .absent
        }
        let block = barcode.level1.dataSequence[index]
        do {
            return .decoded(try railTicketData(block).json)
        } catch {
            return .unreadable(
                UnreadableRecord(
                    tag: block.formatText, version: "", offset: index, place: .level1Data,
                    reason: UIC918_3.asSentence(error.message)))
        }
    }

    /// An FCB block of the level-1 data, decoded as the mapping decodes it.
    private static func railTicketData(_ block: DOSIPASDataBlock) throws(FormatError) -> FCBData {
        guard let version = block.format.fcbVersion else {
            throw .malformed("the \(block.formatText) block is not FCB")
        }
        return try FCBData(decoding: block.data, version: version, subject: "the \(block.formatText) rail ticket data")
    }
}

extension FCBContent {
    /// The payload's FCB content: a UIC 918.3 container's U_FLEX record, or a DOSIPAS barcode's rail ticket,
    /// read from the bytes as scanned whatever the verdict: for a payload on its own (tests, fuzzing); beside a
    /// verdict, `PayloadDecoding` reads it from the verifier's decoding instead.
    public init(payload: [UInt8]) {
        if UIC918_3.isContainer(payload) {
            do {
                self.init(container: try UICContainer(parsing: payload))
            } catch {
                self = .payloadUnreadable(UIC918_3.asSentence(error.message))
            }
        } else if DOSIPASBarcode.isBarcode(payload) {
            do {
                self = DOSIPAS.railTicketJSON(of: try DOSIPASBarcode(decoding: payload))
            } catch {
                self = .payloadUnreadable(UIC918_3.asSentence(error.message))
            }
        } else {
            self = .absent
        }
    }
}

extension FCBContent {
    /// The FCB content of a UIC 918.3 container taken apart: its U_FLEX record's tree, or why there is none.
    public init(container: UICContainer) {
        guard let record = container.record(UICFlex.recordID) else {
            self = .absent
            return
        }
        do throws(FormatError) {
            self = .decoded(try UICFlex.data(record: record).json)
        } catch {
            self = .unreadable(UIC918_3.unreadable(record, error))
        }
    }
}

/// What the DOSIPAS mapping decoded of a barcode, kept behind its ticket (`Ticket.decodedContent`): the ticket's
/// details and its FCB tree are read from it, never from the payload again.
public struct DOSIPASDecodedContent: DecodedTicketContent {
    let barcode: DOSIPASBarcode
    let dynamic: DOSIPASDynamicContent?
    let freshness: DOSIPASFreshness?
    let railTicket: FCBTicket?
    /// Lines after the barcode's own (see `DOSIPAS.content(of:at:appendingDetails:)`).
    let moreDetails: (@Sendable () -> [(label: String, value: String)])?

    public func detailLines() -> [(label: String, value: String)] {
        let lines = DOSIPAS.detailLines(barcode, dynamic: dynamic, freshness: freshness, railTicket: railTicket)
        return moreDetails.map { lines + $0() } ?? lines
    }

    /// The rail ticket's FCB tree as `DOSIPAS.railTicketJSON(of:)` tells it, from the block the mapping decoded.
    public var fcb: FCBContent {
        railTicket.map { .decoded($0.data.json) } ?? .absent
    }
}

/// What a DOSIPAS barcode says, decoded: the format-neutral ticket, the FCB rail ticket, and the dynamic
/// barcode's generation time.
public struct DOSIPASContent: Sendable {
    /// The ticket as `DOSIPAS.ticket(from:at:)` maps it.
    public var ticket: Ticket
    /// The first FCB block of the level-1 data, decoded; `nil` when there is none.
    public var railTicket: FCBTicket?
    /// When the barcode was generated and how long it may be shown; `nil` without a time in the level-2 data.
    /// Authentic only when level 2 verifies.
    public var freshness: DOSIPASFreshness?
}
