import TicketFormats

/// Composes SSB frames bit by bit for the tests: bit 0 is the top bit of byte 0, as in the format.
struct SSBBitWriter {
    var bytes: [UInt8]

    init(byteCount: Int) {
        bytes = [UInt8](repeating: 0, count: byteCount)
    }

    /// Writes the low `width` bits of `value` at bit `offset`.
    mutating func put(_ value: Int, at offset: Int, width: Int) {
        precondition(value >= 0 && (width == 64 || value < 1 << width), "\(value) does not fit \(width) bits")
        for index in 0..<width {
            let bit = offset + index
            let mask = UInt8(0x80) >> UInt8(bit & 7)
            if value >> (width - 1 - index) & 1 == 1 {
                bytes[bit >> 3] |= mask
            } else {
                bytes[bit >> 3] &= ~mask
            }
        }
    }

    /// Writes a flag at bit `offset`.
    mutating func put(_ flag: Bool, at offset: Int) {
        put(flag ? 1 : 0, at: offset, width: 1)
    }

    /// Writes `text` as `count` six-bit characters of `set`, padded with spaces.
    mutating func put(text: String, at offset: Int, count: Int, _ set: SSBCharacterSet) {
        let characters = Array(text.utf8)
        precondition(characters.count <= count, "\"\(text)\" is longer than \(count) characters")
        let space = set.value(of: 0x20)!
        for index in 0..<count {
            let value = index < characters.count ? set.value(of: characters[index])! : space
            put(value, at: offset + 6 * index, width: 6)
        }
    }

    /// Writes the version 3 header (or the version 2 one, which has the same first 22 bits).
    mutating func header(version: Int, issuer: Int, keyID: Int, type: Int? = nil) {
        put(version, at: 0, width: 4)
        put(issuer, at: 4, width: 14)
        put(keyID, at: 18, width: 4)
        if let type { put(type, at: 22, width: 5) }
    }

    /// Writes the version 3 common part (bits 27–144).
    mutating func common(
        adults: Int, children: Int, specimen: Bool, travelClass: Int, ticketNumber: String, yearDigit: Int,
        dayOfYear: Int
    ) {
        put(adults, at: 27, width: 7)
        put(children, at: 34, width: 7)
        put(specimen, at: 41)
        put(travelClass, at: 42, width: 6)
        put(text: ticketNumber, at: 48, count: 14, .ascii)
        put(yearDigit, at: 132, width: 4)
        put(dayOfYear, at: 136, width: 9)
    }

    /// Writes a numeric station block at `start`.
    mutating func numericStations(at start: Int, table: Int, departure: Int, arrival: Int) {
        put(false, at: start)
        put(table, at: start + 1, width: 4)
        put(departure, at: start + 5, width: 28)
        put(arrival, at: start + 33, width: 28)
    }

    /// Writes an alphanumeric station block at `start`.
    mutating func alphanumericStations(at start: Int, departure: String, arrival: String) {
        put(true, at: start)
        put(text: departure, at: start + 1, count: 5, .ascii)
        put(text: arrival, at: start + 31, count: 5, .ascii)
    }
}
