import FareCore

/// Reads ASN.1 unaligned PER (X.691 UPER) from bytes: a bit cursor and the decoder of every type the UIC
/// modules use.
///
/// The stream is one run of bits, most significant bit of each byte first, never aligned. Every read is
/// checked against the end (or, inside an open type, against the open type's end), so truncated or altered
/// data gives `malformed` naming the bit offset and the field path, never a trap or a hang.
///
/// Use `PERDecoder.decode(_:as:subject:)` for a complete encoding; use a reader directly to decode a
/// header field by field and know the bit positions (DOSIPAS signs bit ranges).
public struct PERBitReader: Sendable {
    /// The bytes read.
    public let bytes: [UInt8]
    /// The next bit to read, counted from the first bit of `bytes`.
    public private(set) var position: Int
    /// The bit where reading must stop: the end of the data, or of the open type being read.
    private var limit: Int
    /// What `decode` still may produce: bounds the work for lists of items that take no bits.
    private var budget: Int
    /// How deep recursive types are nested at the current position.
    private var depth = 0
    /// How deep a recursive type may nest: bounds the stack whatever the input.
    static let maximumDepth = 32

    /// A reader at bit `position` (0 = the first bit of `bytes`).
    public init(_ bytes: [UInt8], position: Int = 0) {
        self.bytes = bytes
        let bits = bytes.count &* 8
        self.position = min(max(0, position), bits)
        limit = bits
        // No valid encoding of these schemas holds more values than bits, plus slack for empty lists.
        budget = bits &+ 4_096
    }

    /// How many bits are left before the end.
    public var remainingBits: Int { limit - position }

    // MARK: - Decoding a type

    /// Decodes one value of `type` at the current position.
    ///
    /// - Parameter subject: what the bytes are, for messages, e.g. `the DOSIPAS header`; built only when there is
    ///   an error.
    /// - Throws: `malformed`, naming the bit offset and the field path, when the bits break the type's
    ///   rules or run out.
    public mutating func decode(
        _ type: PERType, subject: @autoclosure () -> String = "the PER data"
    ) throws(FormatError) -> PERValue {
        do {
            return try value(type)
        } catch {
            throw error.formatError(subject: subject())
        }
    }

    /// Reads `count` bits (0…64) as an unsigned number, most significant first: for fields read by hand.
    ///
    /// - Parameter subject: what the bytes are, for messages; built only when there is an error.
    /// - Throws: `malformed` naming the bit offset when fewer than `count` bits are left.
    public mutating func readBits(
        _ count: Int, subject: @autoclosure () -> String = "the PER data"
    ) throws(FormatError) -> UInt64 {
        guard count <= 64 else { throw .malformed("\(subject()): a read of \(count) bits is wider than 64") }
        do {
            return try read(count)
        } catch {
            throw error.formatError(subject: subject())
        }
    }

    /// Decodes one value, failing with the path-carrying internal error.
    mutating func value(_ type: PERType) throws(PERFailure) -> PERValue {
        budget &-= 1
        guard budget > 0 else { throw fail("more values than the data could hold: the lengths are corrupt") }
        switch type {
        case .boolean:
            return .boolean(try read(1) == 1)
        case .null:
            return .null
        case .integer(let lowerBound, let upperBound):
            return .integer(try constrainedInteger(lowerBound, upperBound))
        case .unconstrainedInteger:
            return try unconstrainedInteger()
        case .enumerated(let enumeration):
            return .enumerated(try enumerated(enumeration))
        case .ia5String(let size):
            return .text(try ia5String(size))
        case .utf8String:
            // SIZE is not PER-visible for UTF8String (it counts characters, not octets): always a determinant.
            return .text(try utf8String())
        case .octetString(let size):
            return .octets(try octets(count: try length(size, unit: "octets")))
        case .bitString(let size):
            let count = try length(size, unit: "bits")
            try need(count, "a BIT STRING of \(count) bits")
            var packed: [UInt8] = []
            packed.reserveCapacity((count + 7) / 8)
            var left = count
            while left > 0 {
                let take = min(8, left)
                packed.append(UInt8(try read(take) << (8 - take)))
                left -= take
            }
            return .bits(packed, count: count)
        case .objectIdentifier:
            return .objectIdentifier(try objectIdentifier())
        case .sequence(let sequence):
            return .sequence(try record(sequence))
        case .choice(let choice):
            return try self.choice(choice)
        case .recursive(let recursion):
            depth &+= 1
            defer { depth &-= 1 }
            guard depth <= Self.maximumDepth else {
                throw fail("\(recursion.name) is nested more than \(Self.maximumDepth) deep")
            }
            return try value(recursion.resolve())
        case .sequenceOf(let item, let size):
            let count = try length(size, unit: "items")
            var items: [PERValue] = []
            items.reserveCapacity(min(count, remainingBits &+ 1))
            for index in 0..<count {
                do {
                    items.append(try value(item))
                } catch {
                    throw error.inside(item: index)
                }
            }
            return .list(items)
        }
    }

    private mutating func record(_ sequence: PERSequence) throws(PERFailure) -> PERRecord {
        let extended = sequence.isExtensible ? try read(1) == 1 : false
        // The presence bitmap is read in place: remember where it is rather than copying it.
        let bitmapStart = position
        try skip(sequence.presenceBitCount, "the presence bitmap of \(sequence.name)")
        var record = PERRecord(type: sequence)
        var bit = bitmapStart
        let rootCount = sequence.components.count
        var index = 0
        while index < rootCount {
            defer { index &+= 1 }
            if sequence.presenceBits[index] {
                let present = bitAt(bit)
                bit &+= 1
                // An absent DEFAULT stays nil: the record reads it from the schema.
                guard present else { continue }
            }
            do {
                record.values[index] = try value(sequence.slotTypes[index])
            } catch {
                throw error.inside(sequence.components[index].name)
            }
        }
        guard extended else { return record }

        let count = try normallySmallLength()
        let flagsStart = position
        try skip(count, "the presence bits of \(count) extension additions of \(sequence.name)")
        for addition in 0..<count where bitAt(flagsStart &+ addition) {
            let known = addition < sequence.additions.count ? sequence.additions[addition] : nil
            let name = known?.name ?? "extension addition \(addition + 1)"
            do {
                try openType { (reader: inout PERBitReader) throws(PERFailure) in
                    guard let known else {
                        record.unknownAdditions += 1
                        return
                    }
                    record.values[sequence.components.count + addition] = try reader.value(known.type)
                }
            } catch {
                throw error.inside(name)
            }
        }
        return record
    }

    private mutating func choice(_ choice: PERChoice) throws(PERFailure) -> PERValue {
        let start = position
        if choice.isExtensible, try read(1) == 1 {
            let index = choice.alternatives.count &+ (try normallySmallNumber())
            let known = choice.alternative(at: index)
            var result = PERValue.null
            do {
                try openType { (reader: inout PERBitReader) throws(PERFailure) in
                    if let known {
                        result = try reader.value(known.type)
                    } else {
                        result = .octets(try reader.octets(count: reader.remainingBits / 8))
                    }
                }
            } catch {
                throw error.inside(known?.name ?? "extension alternative \(index + 1)")
            }
            return .choice(index: index, result)
        }
        let count = choice.alternatives.count
        let index = Int(try read(PERSize.bitWidth(UInt64(max(count - 1, 0)))))
        guard index < count else {
            throw PERFailure(
                bitOffset: start, reason: "alternative \(index) of \(choice.name) does not exist (it has \(count))")
        }
        do {
            return .choice(index: index, try value(choice.alternatives[index].type))
        } catch {
            throw error.inside(choice.alternatives[index].name)
        }
    }

    /// Reads an open type (a length in octets and that many octets holding a complete encoding) with `body`
    /// confined to it, then moves past it whatever `body` read.
    private mutating func openType(
        _ body: (inout PERBitReader) throws(PERFailure) -> Void
    ) throws(PERFailure) {
        let octetCount = try length(nil, unit: "octets")
        let start = position
        try need(octetCount &* 8, "an open type of \(octetCount) octets")
        let end = start &+ octetCount &* 8
        let outerLimit = limit
        limit = end
        defer {
            limit = outerLimit
            position = end
        }
        try body(&self)
    }

    // MARK: - Primitives

    private mutating func constrainedInteger(_ lowerBound: Int, _ upperBound: Int) throws(PERFailure) -> Int {
        let start = position
        let span = UInt64(bitPattern: Int64(upperBound &- lowerBound))
        let raw = try read(PERSize.bitWidth(span))
        guard raw <= span else {
            throw PERFailure(
                bitOffset: start,
                reason:
                    "the value \(lowerBound &+ Int(truncatingIfNeeded: raw)) is outside \(lowerBound)..\(upperBound)"
            )
        }
        return lowerBound &+ Int(truncatingIfNeeded: raw)
    }

    private mutating func unconstrainedInteger() throws(PERFailure) -> PERValue {
        let start = position
        let count = try length(nil, unit: "octets")
        guard count > 0 else { throw PERFailure(bitOffset: start, reason: "an INTEGER has no octets") }
        guard count <= 8 else { return .bigInteger(try octets(count: count)) }
        let raw = try read(count &* 8)
        // Sign-extend from the first octet: the encoding is two's complement.
        let shift = 64 - count * 8
        return .integer(Int(truncatingIfNeeded: Int64(bitPattern: raw << UInt64(shift)) >> Int64(shift)))
    }

    /// BER contents octets: base-128 groups, bit 8 set on all but the last octet of a group; the first
    /// group holds 40·X + Y (X is 2 for any value from 80 on).
    private mutating func objectIdentifier() throws(PERFailure) -> [Int] {
        let start = position
        let count = try length(nil, unit: "octets")
        try need(count &* 8, "\(count) octets")
        // Read octet by octet from the bits, into an array sized once: copying the contents out first and
        // growing the arcs one by one were three allocations per identifier (a DOSIPAS header has four).
        var arcs: [Int] = []
        arcs.reserveCapacity(count &+ 1)
        var current = 0
        var inGroup = false
        for _ in 0..<count {
            let byte = UInt8(truncatingIfNeeded: bits(8, at: position))
            position &+= 8
            guard current <= (Int.max >> 7) else {
                throw PERFailure(bitOffset: start, reason: "an OBJECT IDENTIFIER arc is too large")
            }
            if !inGroup, byte == 0x80 {
                throw PERFailure(bitOffset: start, reason: "an OBJECT IDENTIFIER arc starts with a padding octet")
            }
            current = (current << 7) | Int(byte & 0x7F)
            inGroup = byte & 0x80 != 0
            guard !inGroup else { continue }
            if arcs.isEmpty {
                arcs.append(current < 80 ? current / 40 : 2)
                arcs.append(current < 80 ? current % 40 : current - 80)
            } else {
                arcs.append(current)
            }
            current = 0
        }
        guard !arcs.isEmpty, !inGroup else {
            throw PERFailure(bitOffset: start, reason: "the OBJECT IDENTIFIER is empty or cut inside an arc")
        }
        return arcs
    }

    private mutating func enumerated(_ enumeration: PEREnumeration) throws(PERFailure) -> Int {
        let start = position
        if enumeration.isExtensible, try read(1) == 1 {
            return enumeration.names.count &+ (try normallySmallNumber())
        }
        let count = enumeration.names.count
        let index = Int(try read(PERSize.bitWidth(UInt64(max(count - 1, 0)))))
        guard index < count else {
            throw PERFailure(
                bitOffset: start, reason: "value \(index) of \(enumeration.name) does not exist (it has \(count))")
        }
        return index
    }

    private mutating func ia5String(_ size: PERSize?) throws(PERFailure) -> String {
        let count = try length(size, unit: "characters")
        try need(count &* 7, "\(count) IA5 characters")
        // Straight into the string's storage (none at all for 15 characters or fewer): a temporary array per
        // string was an allocation for every text field of a ticket. Seven-bit characters are ASCII, so the
        // string is valid UTF-8 as written.
        var at = position
        let text = String(unsafeUninitializedCapacity: count) { buffer in
            for index in 0..<count {
                buffer[index] = UInt8(truncatingIfNeeded: bits(7, at: at))
                at &+= 7
            }
            return count
        }
        position = at
        return text
    }

    /// A UTF8String's octets after their length determinant, validated.
    private mutating func utf8String() throws(PERFailure) -> String {
        let start = position
        let count = try length(nil, unit: "octets")
        try need(count &* 8, "\(count) octets")
        // Copied out to the stack, then validated into the string: no array between them.
        let text = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: count) { buffer in
            copyOctets(count, into: buffer.baseAddress)
            return String(utf8Validating: UnsafeBufferPointer(start: buffer.baseAddress, count: count))
        }
        position &+= count &* 8
        guard let text else { throw PERFailure(bitOffset: start, reason: "the UTF8String is not valid UTF-8") }
        return text
    }

    /// Reads `count` whole octets (not aligned).
    mutating func octets(count: Int) throws(PERFailure) -> [UInt8] {
        try need(count &* 8, "\(count) octets")
        let result = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            copyOctets(count, into: buffer.baseAddress)
            initialized = count
        }
        position &+= count &* 8
        return result
    }

    /// Copies the `count` octets at the current position to `target`, without moving.
    ///
    /// - Precondition: `need(8 · count)` holds.
    private func copyOctets(_ count: Int, into target: UnsafeMutablePointer<UInt8>?) {
        guard let target, count > 0 else { return }
        // Whole octets at a bit offset: two shifts each, not eight one-bit steps (DOSIPAS data blocks, keys and
        // signatures are hundreds of octets).
        let shift = position & 7
        let source = position >> 3
        bytes.withUnsafeBufferPointer { bytes in
            if shift == 0 {
                target.update(from: bytes.baseAddress! + source, count: count)
                return
            }
            for index in 0..<count {
                // `need` checked the bits through position + 8·count − 1, so with a shift the byte after is there.
                target[index] = bytes[source &+ index] << shift | bytes[source &+ index &+ 1] >> (8 &- shift)
            }
        }
    }

    /// A length: a constrained number when `size` allows (no bits at all for a fixed size), else a length
    /// determinant; checked against `size`.
    mutating func length(_ size: PERSize?, unit: String) throws(PERFailure) -> Int {
        let start = position
        let count: Int
        if let size, let width = size.constrainedWidth {
            count = size.lowerBound &+ Int(try read(width))
        } else {
            count = try lengthDeterminant()
        }
        if let size {
            guard count >= size.lowerBound, count <= (size.upperBound ?? Int.max) else {
                let upper = size.upperBound.map(String.init) ?? "MAX"
                throw PERFailure(
                    bitOffset: start,
                    reason: "a length of \(count) \(unit) is outside SIZE(\(size.lowerBound)..\(upper))")
            }
        }
        return count
    }

    /// An unconstrained length determinant: 0–127 in 8 bits, 0–16383 in 16 bits. Fragmented lengths (64K
    /// units and more) cannot occur in a barcode and are refused.
    mutating func lengthDeterminant() throws(PERFailure) -> Int {
        let start = position
        if try read(1) == 0 { return Int(try read(7)) }
        if try read(1) == 0 { return Int(try read(14)) }
        throw PERFailure(
            bitOffset: start, reason: "a fragmented length (16384 units or more) cannot occur in a barcode")
    }

    /// A normally small non-negative whole number (CHOICE and ENUMERATED extension indexes).
    private mutating func normallySmallNumber() throws(PERFailure) -> Int {
        let start = position
        if try read(1) == 0 { return Int(try read(6)) }
        let count = try lengthDeterminant()
        guard count >= 1, count <= 2 else {
            throw PERFailure(bitOffset: start, reason: "an extension index of \(count) octets is beyond any schema")
        }
        return Int(try read(count * 8))
    }

    /// A normally small length (the number of extension additions): n − 1 in 6 bits when n ≤ 64.
    private mutating func normallySmallLength() throws(PERFailure) -> Int {
        let start = position
        if try read(1) == 0 { return Int(try read(6)) &+ 1 }
        let count = try lengthDeterminant()
        guard count >= 1 else {
            throw PERFailure(bitOffset: start, reason: "an extension bit is set but no extension additions follow")
        }
        return count
    }

    /// The `count` bits (0…57) at bit `offset` as an unsigned number, most significant first, unchecked.
    ///
    /// - Precondition: the bits lie within `bytes`.
    private func bits(_ count: Int, at offset: Int) -> UInt64 {
        // At most 8 bytes hold 57 bits at any offset: gather them, then shift the wanted bits down.
        let first = offset >> 3
        let last = (offset &+ count &- 1) >> 3
        var window: UInt64 = 0
        var index = first
        while index <= last {
            window = window << 8 | UInt64(bytes[index])
            index &+= 1
        }
        let used = (last &- first &+ 1) &* 8
        let shift = used &- (offset & 7) &- count
        return (window >> UInt64(shift)) & ((1 << UInt64(count)) &- 1)
    }

    /// Reads `count` bits (0…64) as an unsigned number, most significant first.
    mutating func read(_ count: Int) throws(PERFailure) -> UInt64 {
        try need(count, "\(count) bits")
        if count > 0, count <= 57 {
            let result = bits(count, at: position)
            position &+= count
            return result
        }
        var result: UInt64 = 0
        var left = count
        var at = position
        while left > 0 {
            let byte = UInt64(bytes[at >> 3])
            let available = 8 - (at & 7)
            let take = min(available, left)
            let chunk = (byte >> UInt64(available - take)) & ((1 << UInt64(take)) - 1)
            result = (result << UInt64(take)) | chunk
            left -= take
            at += take
        }
        position = at
        return result
    }

    private mutating func skip(_ count: Int, _ what: @autoclosure () -> String) throws(PERFailure) {
        try need(count, what())
        position &+= count
    }

    private func bitAt(_ offset: Int) -> Bool {
        (bytes[offset >> 3] >> (7 - UInt8(offset & 7))) & 1 == 1
    }

    private func need(_ count: Int, _ what: @autoclosure () -> String) throws(PERFailure) {
        guard count >= 0, count <= limit - position else {
            let end = limit == bytes.count * 8 ? "the data ends" : "the open type ends"
            throw PERFailure(
                bitOffset: position, reason: "\(what()) are needed but \(end) after \(limit - position) bits")
        }
    }

    private func fail(_ reason: String) -> PERFailure {
        PERFailure(bitOffset: position, reason: reason)
    }
}

/// A decoding failure on its way up: where it happened, why, and the path gathered while unwinding.
struct PERFailure: Error {
    /// The bit where the failing item starts.
    var bitOffset: Int
    /// What is wrong, as a phrase.
    var reason: String
    /// The path from the innermost field outwards: names, and `[n]` for list items.
    var reversedPath: [String] = []

    /// The failure seen from the component that contains it.
    func inside(_ name: String) -> PERFailure {
        var copy = self
        copy.reversedPath.append(name)
        return copy
    }

    /// The failure seen from the list that contains it.
    func inside(item index: Int) -> PERFailure {
        var copy = self
        copy.reversedPath.append("[\(index)]")
        return copy
    }

    /// `transportDocument[0].ticket.openTicket.validFromDay`.
    var path: String {
        var text = ""
        for part in reversedPath.reversed() {
            if !text.isEmpty, !part.hasPrefix("[") { text += "." }
            text += part
        }
        return text
    }

    /// The sentence a person reads.
    func formatError(subject: String) -> FormatError {
        let place = reversedPath.isEmpty ? "" : " in \(path)"
        return .malformed("\(subject) breaks at bit \(bitOffset)\(place): \(reason)")
    }
}
