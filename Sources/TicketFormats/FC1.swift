import FareCore
import Foundation

/// The project's own signed ticket format, FC1: COSE_Sign1 over CWT claims (see docs/formats-and-trust.md).
public enum FC1 {
    /// The text prefix of the base45 transport that farecheck accepts unless configured otherwise.
    public static let defaultPrefix = "FC1:"

    /// How an FC1 COSE message is carried in a barcode.
    public enum Transport: Sendable, Equatable {
        /// `prefix` + base45(zlib(COSE)): for QR codes in alphanumeric mode and keyboard wedges.
        case text(prefix: String)
        /// zlib(COSE) bytes: for Aztec codes.
        case zlib
        /// The COSE bytes as they are.
        case plain
    }

    /// Wraps COSE bytes for a barcode.
    public static func encode(cose: [UInt8], transport: Transport) -> [UInt8] {
        switch transport {
        case .text(let prefix): Array(prefix.utf8) + Base45.encode(Zlib.deflate(cose))
        case .zlib: Zlib.deflate(cose)
        case .plain: cose
        }
    }

    /// The claims of a ticket to be issued.
    public struct Claims: Sendable {
        public var issuer: String
        public var ticketID: [UInt8]
        public var issuedAt: Date
        public var validFrom: Date?
        public var validUntil: Date
        public var product: String
        public var zones: [String]?
        public var category: String?
        public var passengers: Int?
        public var holder: String?
        public var activatedAt: Date?
        public var activationDuration: Int?
        public var reactivations: Int?

        public init(
            issuer: String, ticketID: [UInt8], issuedAt: Date, validFrom: Date?, validUntil: Date, product: String,
            zones: [String]? = nil, category: String? = nil, passengers: Int? = nil, holder: String? = nil,
            activatedAt: Date? = nil, activationDuration: Int? = nil, reactivations: Int? = nil
        ) {
            self.issuer = issuer
            self.ticketID = ticketID
            self.issuedAt = issuedAt
            self.validFrom = validFrom
            self.validUntil = validUntil
            self.product = product
            self.zones = zones
            self.category = category
            self.passengers = passengers
            self.holder = holder
            self.activatedAt = activatedAt
            self.activationDuration = activationDuration
            self.reactivations = reactivations
        }

        /// The CWT claims map as CBOR bytes: the COSE payload.
        public func encoded() -> [UInt8] {
            var ticket: [(key: CBOR, value: CBOR)] = [(.text("p"), .text(product))]
            if let zones { ticket.append((.text("z"), .array(zones.map { .text($0) }))) }
            if let category { ticket.append((.text("c"), .text(category))) }
            if let passengers { ticket.append((.text("n"), .int(Int64(passengers)))) }
            if let holder { ticket.append((.text("h"), .text(holder))) }
            if let activatedAt { ticket.append((.text("a"), .int(numericDate(activatedAt)))) }
            if let activationDuration { ticket.append((.text("d"), .int(Int64(activationDuration)))) }
            if let reactivations { ticket.append((.text("r"), .int(Int64(reactivations)))) }
            var claims: [(key: CBOR, value: CBOR)] = [
                (.unsigned(1), .text(issuer)),
                (.unsigned(4), .int(numericDate(validUntil))),
            ]
            if let validFrom { claims.append((.unsigned(5), .int(numericDate(validFrom)))) }
            claims.append((.unsigned(6), .int(numericDate(issuedAt))))
            claims.append((.unsigned(7), .bytes(ticketID)))
            claims.append((.text("tkt"), .map(ticket)))
            return CBOREncoder.encode(.map(claims))
        }

        private func numericDate(_ date: Date) -> Int64 { Int64(date.timeIntervalSince1970.rounded(.down)) }
    }

    /// Reads the claims of a verified payload into a ticket; `malformed` names the claim at fault.
    ///
    /// `h` is free text chosen by the issuer (an ID's last digits, a staff id): it is the holder line and the holder
    /// check's `note` as written, never split into a name or a document, which it need not contain.
    public static func ticket(fromClaims payload: [UInt8]) throws(FormatError) -> Ticket {
        let claims = try CBORDecoder.decode(payload)
        guard let claimPairs = claims.mapPairs else {
            throw .malformed("CWT claims must be a map, found a \(claims.typeName)")
        }
        // One pass over the pairs (first occurrence wins): this runs for every scan.
        var iss: CBOR?
        var exp: CBOR?
        var nbf: CBOR?
        var iat: CBOR?
        var cti: CBOR?
        var tkt: CBOR?
        for (key, value) in claimPairs {
            switch key {
            case .unsigned(1): if iss == nil { iss = value }
            case .unsigned(4): if exp == nil { exp = value }
            case .unsigned(5): if nbf == nil { nbf = value }
            case .unsigned(6): if iat == nil { iat = value }
            case .unsigned(7): if cti == nil { cti = value }
            case .text("tkt"): if tkt == nil { tkt = value }
            default: break
            }
        }
        let claim = ClaimReader(context: "claim")
        let issuer = try claim.text(iss, name: "iss (1)", required: true)!
        let expires = try claim.date(exp, name: "exp (4)", required: true)!
        let notBefore = try claim.date(nbf, name: "nbf (5)")
        let issuedAt = try claim.date(iat, name: "iat (6)")
        guard case .bytes(let ticketID)? = cti else {
            if let other = cti { throw .malformed("claim cti (7) must be a byte string, found a \(other.typeName)") }
            throw .malformed("claim cti (7), the ticket id, is missing")
        }
        guard let body = tkt else { throw .malformed("claim tkt, the ticket itself, is missing") }
        guard let bodyPairs = body.mapPairs else {
            throw .malformed("claim tkt must be a map, found a \(body.typeName)")
        }
        var p: CBOR?
        var z: CBOR?
        var c: CBOR?
        var n: CBOR?
        var h: CBOR?
        var a: CBOR?
        var d: CBOR?
        var r: CBOR?
        for (key, value) in bodyPairs {
            guard case .text(let name) = key else { continue }
            switch name {
            case "p": if p == nil { p = value }
            case "z": if z == nil { z = value }
            case "c": if c == nil { c = value }
            case "n": if n == nil { n = value }
            case "h": if h == nil { h = value }
            case "a": if a == nil { a = value }
            case "d": if d == nil { d = value }
            case "r": if r == nil { r = value }
            default: break
            }
        }
        let field = ClaimReader(context: "ticket field")
        let product = try field.text(p, name: "p", required: true)!
        var zones: [String]?
        if let zoneItem = z {
            guard case .array(let items) = zoneItem else {
                throw .malformed("ticket field z must be an array, found a \(zoneItem.typeName)")
            }
            zones = try items.map { item throws(FormatError) -> String in
                guard case .text(let zone) = item else {
                    throw .malformed("ticket field z must hold text, found a \(item.typeName)")
                }
                return zone
            }
        }
        let category = try field.text(c, name: "c")
        let passengers = try field.count(n, name: "n")
        let holder = try field.text(h, name: "h")
        let activatedAt = try field.date(a, name: "a")
        let duration = try field.count(d, name: "d")
        let reactivations = try field.count(r, name: "r")

        var validFrom = notBefore ?? issuedAt
        var validUntil = expires
        var details: [(label: String, value: String)] = []
        if let activatedAt, let duration {
            validFrom = activatedAt
            validUntil = min(activatedAt.addingTimeInterval(TimeInterval(duration)), expires)
            details.append(("activation period", "\(duration) s"))
        }
        return Ticket(
            format: .fc1, issuer: issuer, ticketID: ticketID, validFrom: validFrom, validUntil: validUntil,
            issuedAt: issuedAt, product: product, zones: zones, category: category, passengers: passengers ?? 1,
            holder: holder,
            holderCheck: holder.map { TicketHolder(note: $0) }, activatedAt: activatedAt, reactivations: reactivations,
            details: details
        )
    }
}

/// Typed reading of claim values, with errors that name the claim.
private struct ClaimReader {
    let context: String

    func text(_ item: CBOR?, name: String, required: Bool = false) throws(FormatError) -> String? {
        guard let item else {
            if required { throw .malformed("\(context) \(name) is missing") }
            return nil
        }
        guard case .text(let value) = item else {
            throw .malformed("\(context) \(name) must be text, found a \(item.typeName)")
        }
        return value
    }

    func date(_ item: CBOR?, name: String, required: Bool = false) throws(FormatError) -> Date? {
        guard let item else {
            if required { throw .malformed("\(context) \(name) is missing") }
            return nil
        }
        // NumericDate: whole seconds; bounded so that Date arithmetic never overflows.
        guard let seconds = item.intValue, abs(seconds) < 1 << 40 else {
            throw .malformed("\(context) \(name) must be a date in whole seconds, found a \(item.typeName)")
        }
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    func count(_ item: CBOR?, name: String) throws(FormatError) -> Int? {
        guard let item else { return nil }
        guard case .unsigned(let value) = item, value <= UInt64(Int32.max) else {
            throw .malformed("\(context) \(name) must be a small unsigned integer, found \(item)")
        }
        return Int(value)
    }
}
