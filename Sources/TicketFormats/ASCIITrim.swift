extension StringProtocol {
    /// The text without leading and trailing ASCII spaces, tabs, line breaks and (optionally) NUL bytes.
    ///
    /// Ticket fields are padded with ASCII only; Foundation's `trimmingCharacters(in:)` goes through
    /// NSString and costs more than the rest of reading a field, on a path that runs for every scan.
    func trimmingASCIIWhitespace(includingNUL: Bool = false) -> String {
        let utf8 = Substring(self).utf8
        func isPadding(_ byte: UInt8) -> Bool {
            byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D || (includingNUL && byte == 0)
        }
        guard let first = utf8.firstIndex(where: { !isPadding($0) }) else { return "" }
        let last = utf8.lastIndex(where: { !isPadding($0) })!
        return String(decoding: utf8[first...last], as: UTF8.self)
    }
}
