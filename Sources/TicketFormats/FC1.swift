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
        if let claims = payload.withUnsafeBufferPointer({ ClaimValues(scanning: $0) }) { return claims.ticket() }
        return try ClaimValues(decoding: payload).ticket()
    }

    /// The in-place reading alone: `nil` where `ticket(fromClaims:)` falls back to the decoded tree (for tests).
    static func ticketScanningClaims(_ payload: [UInt8]) -> Ticket? {
        payload.withUnsafeBufferPointer { ClaimValues(scanning: $0) }?.ticket()
    }

    /// The decoded tree's reading alone (for tests).
    static func ticketDecodingClaims(_ payload: [UInt8]) throws(FormatError) -> Ticket {
        try ClaimValues(decoding: payload).ticket()
    }
}

/// The claims an FC1 ticket is made of, read and typed.
private struct ClaimValues {
    var issuer = ""
    var expires = Date.distantPast
    var notBefore: Date?
    var issuedAt: Date?
    var ticketID: [UInt8] = []
    var product = ""
    var zones: [String]?
    var category: String?
    var passengers: Int?
    var holder: String?
    var activatedAt: Date?
    var duration: Int?
    var reactivations: Int?

    /// Reads the claims in place (`CBORScanner`): what every genuine ticket takes. `nil` for anything irregular —
    /// malformed CBOR, a claim of the wrong type or out of range, a missing claim — which `init(decoding:)` then
    /// reads again to say what is wrong. Both read the first occurrence of a claim and ignore the rest.
    init?(scanning bytes: UnsafeBufferPointer<UInt8>) {
        var scanner = CBORScanner(bytes)
        guard let top = scanner.head(), top.major == 5, top.value <= UInt64(scanner.remaining) / 2 else { return nil }
        var seen: UInt8 = 0  // iss, exp, nbf, iat, cti, tkt
        for _ in 0..<top.value {
            let keyStart = scanner
            guard let key = scanner.head() else { return nil }
            var bit: UInt8 = 0
            switch (key.major, key.value) {
            case (0, 1): bit = 1
            case (0, 4): bit = 2
            case (0, 5): bit = 4
            case (0, 6): bit = 8
            case (0, 7): bit = 16
            case (3, 3):
                guard let name = scanner.take(key) else { return nil }
                if name.elementsEqual("tkt".utf8) {
                    bit = 32
                } else if String(utf8Validating: name) == nil {
                    return nil
                }
            default:
                scanner = keyStart
                guard scanner.skip(depth: 1) else { return nil }
            }
            if bit == 0 || seen & bit != 0 {
                guard scanner.skip(depth: 1) else { return nil }
                continue
            }
            seen |= bit
            switch bit {
            case 1:
                guard let value = scanner.text() else { return nil }
                issuer = value
            case 2:
                guard let value = scanner.date() else { return nil }
                expires = value
            case 4:
                guard let value = scanner.date() else { return nil }
                notBefore = value
            case 8:
                guard let value = scanner.date() else { return nil }
                issuedAt = value
            case 16:
                guard let value = scanner.byteString() else { return nil }
                ticketID = value
            default: guard readTicket(&scanner) else { return nil }
            }
        }
        // iss, exp, cti and tkt are required (and tkt's p, checked in `readTicket`).
        guard scanner.isAtEnd, seen & (1 | 2 | 16 | 32) == 1 | 2 | 16 | 32 else { return nil }
    }

    /// The `tkt` map at depth 1.
    private mutating func readTicket(_ scanner: inout CBORScanner) -> Bool {
        guard let map = scanner.head(), map.major == 5, map.value <= UInt64(scanner.remaining) / 2 else {
            return false
        }
        var seen: UInt8 = 0  // p, z, c, n, h, a, d, r
        for _ in 0..<map.value {
            let keyStart = scanner
            guard let key = scanner.head() else { return false }
            var bit: UInt8 = 0
            if key.major == 3 {
                guard let name = scanner.take(key) else { return false }
                if name.count == 1, name[0] < 0x80 {
                    switch name[0] {
                    case UInt8(ascii: "p"): bit = 1
                    case UInt8(ascii: "z"): bit = 2
                    case UInt8(ascii: "c"): bit = 4
                    case UInt8(ascii: "n"): bit = 8
                    case UInt8(ascii: "h"): bit = 16
                    case UInt8(ascii: "a"): bit = 32
                    case UInt8(ascii: "d"): bit = 64
                    case UInt8(ascii: "r"): bit = 128
                    default: break
                    }
                } else if String(utf8Validating: name) == nil {
                    return false
                }
            } else {
                scanner = keyStart
                guard scanner.skip(depth: 2) else { return false }
            }
            if bit == 0 || seen & bit != 0 {
                guard scanner.skip(depth: 2) else { return false }
                continue
            }
            seen |= bit
            switch bit {
            case 1:
                guard let value = scanner.text() else { return false }
                product = value
            case 2:
                guard let array = scanner.head(), array.major == 4, array.value <= UInt64(scanner.remaining) else {
                    return false
                }
                var items: [String] = []
                items.reserveCapacity(Int(array.value))
                for _ in 0..<array.value {
                    guard let zone = scanner.text() else { return false }
                    items.append(zone)
                }
                zones = items
            case 4:
                guard let value = scanner.text() else { return false }
                category = value
            case 8:
                guard let value = scanner.count() else { return false }
                passengers = value
            case 16:
                guard let value = scanner.text() else { return false }
                holder = value
            case 32:
                guard let value = scanner.date() else { return false }
                activatedAt = value
            case 64:
                guard let value = scanner.count() else { return false }
                duration = value
            default:
                guard let value = scanner.count() else { return false }
                reactivations = value
            }
        }
        return seen & 1 != 0
    }

    /// Reads the claims through `CBORDecoder`, throwing `malformed` with the claim at fault.
    init(decoding payload: [UInt8]) throws(FormatError) {
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
        issuer = try claim.text(iss, name: "iss (1)", required: true)!
        expires = try claim.date(exp, name: "exp (4)", required: true)!
        notBefore = try claim.date(nbf, name: "nbf (5)")
        issuedAt = try claim.date(iat, name: "iat (6)")
        guard case .bytes(let id)? = cti else {
            if let other = cti { throw .malformed("claim cti (7) must be a byte string, found a \(other.typeName)") }
            throw .malformed("claim cti (7), the ticket id, is missing")
        }
        ticketID = id
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
        product = try field.text(p, name: "p", required: true)!
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
        category = try field.text(c, name: "c")
        passengers = try field.count(n, name: "n")
        holder = try field.text(h, name: "h")
        activatedAt = try field.date(a, name: "a")
        duration = try field.count(d, name: "d")
        reactivations = try field.count(r, name: "r")

    }

    /// The ticket these claims make.
    func ticket() -> Ticket {
        var validFrom = notBefore ?? issuedAt
        var validUntil = expires
        var details: [(label: String, value: String)] = []
        if let activatedAt, let duration {
            validFrom = activatedAt
            validUntil = min(activatedAt.addingTimeInterval(TimeInterval(duration)), expires)
            details.append(("activation period", "\(duration) s"))
        }
        return Ticket(
            format: .fc1, issuer: IssuerID(issuer), ticketID: TicketID(ticketID), validFrom: validFrom,
            validUntil: validUntil,
            issuedAt: issuedAt, product: product, zones: zones, category: category, passengers: passengers ?? 1,
            holder: holder,
            holderCheck: holder.map { TicketHolder(note: $0) }, activatedAt: activatedAt, reactivations: reactivations,
            details: details
        )
    }
}

extension CBORScanner {
    /// A NumericDate (whole seconds) within the range `ClaimReader.date` accepts.
    fileprivate mutating func date() -> Date? {
        guard let seconds = integer(), ClaimReader.isNumericDate(seconds) else { return nil }
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    /// A small unsigned integer, as `ClaimReader.count` accepts it.
    fileprivate mutating func count() -> Int? {
        guard let head = head(), head.major == 0, head.value <= UInt64(Int32.max) else { return nil }
        return Int(head.value)
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
        guard let seconds = item.intValue, Self.isNumericDate(seconds) else {
            throw .malformed("\(context) \(name) must be a date in whole seconds, found a \(item.typeName)")
        }
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    /// Whether `seconds` is within the NumericDate range read: bounded so that Date arithmetic never overflows
    /// (compared on both sides: `abs` of the most negative integer CBOR can carry would overflow).
    static func isNumericDate(_ seconds: Int64) -> Bool { seconds > -(1 << 40) && seconds < 1 << 40 }

    func count(_ item: CBOR?, name: String) throws(FormatError) -> Int? {
        guard let item else { return nil }
        guard case .unsigned(let value) = item, value <= UInt64(Int32.max) else {
            throw .malformed("\(context) \(name) must be a small unsigned integer, found \(item)")
        }
        return Int(value)
    }
}
