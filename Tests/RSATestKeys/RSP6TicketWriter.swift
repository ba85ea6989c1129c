import TicketFormats

/// An RSP6 ticket written bit by bit, the way the format lays it out: for round trips and bad input.
public struct RSP6TicketWriter {
    public var bits: [Bool]

    public init(bitCount: Int) { bits = Array(repeating: false, count: bitCount) }

    public mutating func number(_ value: Int, at offset: Int, width: Int) {
        for index in 0..<width { bits[offset + index] = (value >> (width - 1 - index)) & 1 == 1 }
    }

    public mutating func text(_ value: String, at offset: Int, count: Int) {
        let padded = Array(value.utf8) + Array(repeating: UInt8(ascii: " "), count: max(0, count - value.utf8.count))
        for index in 0..<count { number(Int(padded[index]) - 32, at: offset + 6 * index, width: 6) }
    }

    /// Days since 1997-01-01 and minutes after midnight, UK time.
    public mutating func dateTime(days: Int, minutes: Int, at offset: Int) {
        number(days, at: offset, width: 14)
        number(minutes, at: offset + 14, width: 11)
    }

    public var bytes: [UInt8] {
        stride(from: 0, to: bits.count, by: 8).map { start in
            (0..<8).reduce(UInt8(0)) { byte, index in
                byte << 1 | (start + index < bits.count && bits[start + index] ? 1 : 0)
            }
        }
    }

    /// A ticket with every field set, one reservation, purchase data and a free text.
    public static func full(days: Int = 10_555, minutes: Int = 8 * 60 + 15, daysOfValidity: Int = 3) -> [UInt8] {
        var writer = RSP6TicketWriter(
            bitCount: RSP6Ticket.fixedPartBits + RSP6Ticket.purchaseBits + RSP6Ticket.reservationBits
                + 6 * RSP6Ticket.freeTextCharacters)
        writer.text("ABC123XYZ", at: 8, count: 9)
        writer.number(1, at: 68, width: 4)
        writer.text("SOR", at: 73, count: 3)
        writer.text("OFF", at: 91, count: 3)
        writer.text("5426", at: 109, count: 4)
        writer.text("1072", at: 133, count: 4)
        writer.text("0429", at: 157, count: 4)
        writer.number(2, at: 182, width: 2)
        writer.number(617, at: 184, width: 10)
        writer.number(738, at: 194, width: 17)
        writer.dateTime(days: days, minutes: minutes, at: 211)
        writer.number(1, at: 236, width: 2)
        writer.number(4242, at: 238, width: 17)
        writer.text("MS A SMITH", at: 255, count: 12)
        writer.number(2, at: 327, width: 2)
        writer.text("TE", at: 329, count: 7)
        writer.number(0, at: 379, width: 4)
        writer.number(1, at: 384, width: 1)
        writer.number(1, at: 385, width: 1)
        writer.number(1, at: 386, width: 4)
        let purchase = RSP6Ticket.fixedPartBits
        writer.dateTime(days: days - 2, minutes: 19 * 60 + 2, at: purchase)
        writer.number(12_345, at: purchase + 25, width: 21)
        writer.text("P7Q8R9S0", at: purchase + 59, count: 8)
        writer.number(daysOfValidity, at: purchase + 107, width: 9)
        let reservation = purchase + RSP6Ticket.purchaseBits
        writer.text("GR", at: reservation, count: 2)
        writer.number(1_234, at: reservation + 12, width: 14)
        writer.text("C", at: reservation + 26, count: 1)
        writer.text("A", at: reservation + 32, count: 1)
        writer.number(42, at: reservation + 38, width: 7)
        writer.text("VALID VIA LONDON", at: reservation + RSP6Ticket.reservationBits, count: 51)
        return writer.bytes
    }
}
