/// A value of a TOML document.
///
/// Dates and times are kept as their text: our configurations have no date key, so one is only ever refused by
/// type, and the reader need not compute calendars.
public indirect enum TOMLValue: Equatable, Sendable {
    /// A string of any of the four forms, escapes resolved.
    case string(String)
    /// An integer, written in any of the four bases.
    case integer(Int64)
    /// A float, `inf` and `nan` included.
    case float(Double)
    /// `true` or `false`.
    case boolean(Bool)
    /// A date, a time or both, as written (recognised, not checked).
    case dateTime(String)
    /// An array, or the tables of an array of tables (`[[name]]`).
    case array([TOMLValue])
    /// A table: a header's, a dotted key's, or an inline one.
    case table(TOMLTable)

    /// What kind of value this is, as an error message names it: "a string", "an integer", "a table".
    public var kindName: String {
        switch self {
        case .string: "a string"
        case .integer: "an integer"
        case .float: "a float"
        case .boolean: "a boolean"
        case .dateTime: "a date or time"
        case .array: "an array"
        case .table: "a table"
        }
    }
}

/// A TOML table: its keys and values.
public struct TOMLTable: Equatable, Sendable {
    /// The table's keys (each one part: a dotted key makes nested tables) and their values.
    public var entries: [String: TOMLValue]

    /// A table holding `entries`.
    public init(entries: [String: TOMLValue] = [:]) {
        self.entries = entries
    }
}

/// Why a document is not TOML, and on which line.
public struct TOMLSyntaxError: Error, Equatable, Sendable {
    /// What is wrong, and what would be accepted.
    public var message: String
    /// The line, counted from 1.
    public var line: Int

    /// An error on `line` saying `message`.
    public init(message: String, line: Int) {
        self.message = message
        self.line = line
    }
}

/// Reads a TOML 1.0 document into a ``TOMLTable``: pure Swift, so no input can abort the process.
///
/// farecheck used TOMLKit (over the C++ toml++ 3.4), whose reader asserts on inputs such as a table header
/// `[!]` or a broken date: in a debug build an assertion aborts the daemon, in a release build it is undefined
/// behaviour. Fuzzing the configuration found both, so configurations are read here. Everything TOML 1.0 writes
/// is read (tables, arrays of tables, dotted and quoted keys, the four string forms, integers in four bases,
/// floats, booleans, arrays, inline tables), except that dates and times are only recognised, not checked.
/// Nesting is limited (``maximumDepth``) so that no input can exhaust the stack.
public struct TOMLReader {
    /// The deepest nesting of arrays and inline tables, and the most parts of a dotted key.
    public static let maximumDepth = 64

    /// A table while the document is read: tables are shared between the path that made them and later
    /// headers and dotted keys that add to them.
    private final class Node {
        enum Entry {
            case value(TOMLValue)
            case table(Node)
            case arrayOfTables(TableList)
        }

        /// The tables of `[[name]]`, appended to in place (a value array would be copied at each header).
        final class TableList {
            var nodes: [Node]

            init(_ nodes: [Node]) { self.nodes = nodes }
        }

        enum Origin {
            /// Made on the way to a deeper table (`[a.b]` makes `a`); a header may still define it.
            case implicit
            /// Defined by a header, or by dotted keys (`a.b = 1` in its parent).
            case defined
            /// An inline table: complete as written.
            case inline
        }

        var entries: [String: Entry] = [:]
        var origin: Origin

        init(origin: Origin) { self.origin = origin }

        var value: TOMLTable {
            var table = TOMLTable()
            for (key, entry) in entries {
                switch entry {
                case .value(let value): table.entries[key] = value
                case .table(let node): table.entries[key] = .table(node.value)
                case .arrayOfTables(let list): table.entries[key] = .array(list.nodes.map { .table($0.value) })
                }
            }
            return table
        }
    }

    private let scalars: [Unicode.Scalar]
    private var index = 0
    private var line = 1

    /// Reads `text` as one TOML document.
    ///
    /// - Throws: The first syntax error, with its line.
    public static func read(_ text: String) throws(TOMLSyntaxError) -> TOMLTable {
        var reader = TOMLReader(text)
        return try reader.document()
    }

    private init(_ text: String) {
        var scalars = Array(text.unicodeScalars)
        if scalars.first == "\u{FEFF}" { scalars.removeFirst() }
        self.scalars = scalars
    }

    // MARK: Document, headers, key/value pairs

    private mutating func document() throws(TOMLSyntaxError) -> TOMLTable {
        let root = Node(origin: .defined)
        var current = root
        while true {
            skipSpaces()
            guard let scalar = peek() else { break }
            if try takeLineBreak() { continue }
            if scalar == "#" {
                try skipComment()
                continue
            }
            if scalar == "[" {
                current = try header(root: root)
            } else {
                try keyValue(into: current)
            }
            try endOfLine()
        }
        return root.value
    }

    /// `[a.b]` or `[[a.b]]`: the table that the following pairs go into.
    private mutating func header(root: Node) throws(TOMLSyntaxError) -> Node {
        index += 1
        let isArray = peek() == "["
        if isArray { index += 1 }
        skipSpaces()
        let keys = try dottedKey()
        skipSpaces()
        let closing = isArray ? "]]" : "]"
        for _ in closing {
            guard peek() == "]" else {
                let opening = isArray ? "[[" : "["
                throw error("expected \(closing) to close the table header \(opening)\(keys.joined(separator: "."))")
            }
            index += 1
        }
        var table = root
        for key in keys.dropLast() { table = try descend(table, key, keys) }
        let last = keys[keys.count - 1]
        switch table.entries[last] {
        case nil:
            let node = Node(origin: .defined)
            table.entries[last] = isArray ? .arrayOfTables(Node.TableList([node])) : .table(node)
            return node
        case .arrayOfTables(let list)? where isArray:
            let node = Node(origin: .defined)
            list.nodes.append(node)
            return node
        case .table(let node)? where !isArray && node.origin == .implicit:
            node.origin = .defined
            return node
        default:
            throw error("\(keys.joined(separator: ".")) is defined twice")
        }
    }

    /// The table `key` of `table` on the way along a header's or a dotted key's path, made when missing.
    private mutating func descend(_ table: Node, _ key: String, _ path: [String]) throws(TOMLSyntaxError) -> Node {
        switch table.entries[key] {
        case nil:
            let node = Node(origin: .implicit)
            table.entries[key] = .table(node)
            return node
        case .table(let node)? where node.origin != .inline:
            return node
        case .arrayOfTables(let list)?:
            // `[[a]]` then `[a.b]`: b belongs to the last table of the array.
            guard let last = list.nodes.last else { throw error("\(path.joined(separator: ".")) cannot be extended") }
            return last
        default:
            throw error("\(path.joined(separator: ".")): \(key) is already a value, not a table")
        }
    }

    /// `key = value` (or `a.b.c = value`) into `table`.
    private mutating func keyValue(into table: Node) throws(TOMLSyntaxError) {
        let keys = try dottedKey()
        skipSpaces()
        guard peek() == "=" else { throw error("expected = after the key \(keys.joined(separator: "."))") }
        index += 1
        skipSpaces()
        let value = try value(depth: 0)
        var target = table
        for key in keys.dropLast() {
            target = try descend(target, key, keys)
            if target.origin == .implicit { target.origin = .defined }
        }
        let last = keys[keys.count - 1]
        guard target.entries[last] == nil else { throw error("\(keys.joined(separator: ".")) is defined twice") }
        target.entries[last] = .value(value)
    }

    /// A key of one or more parts: bare (`a-b_1`), quoted (`"a b"`, `'a'`), joined by dots.
    private mutating func dottedKey() throws(TOMLSyntaxError) -> [String] {
        var keys: [String] = []
        while true {
            guard keys.count < Self.maximumDepth else { throw error("a key of more than \(Self.maximumDepth) parts") }
            keys.append(try simpleKey())
            skipSpaces()
            guard peek() == "." else { return keys }
            index += 1
            skipSpaces()
        }
    }

    private mutating func simpleKey() throws(TOMLSyntaxError) -> String {
        guard let scalar = peek() else { throw error("expected a key, found the end of the file") }
        if scalar == "\"" || scalar == "'" {
            if peek(1) == scalar, peek(2) == scalar { throw error("a key cannot be a multi-line string") }
            return try quotedString()
        }
        var key = String.UnicodeScalarView()
        while let scalar = peek(), Self.isBareKeyCharacter(scalar) {
            key.append(scalar)
            index += 1
        }
        guard !key.isEmpty else {
            throw error("expected a key (letters, digits, _ or -, or a quoted key), found \(describe(scalar))")
        }
        return String(key)
    }

    // MARK: Values

    private mutating func value(depth: Int) throws(TOMLSyntaxError) -> TOMLValue {
        guard depth < Self.maximumDepth else {
            throw error("arrays and inline tables nested more than \(Self.maximumDepth) deep")
        }
        guard let scalar = peek() else { throw error("expected a value, found the end of the file") }
        switch scalar {
        case "\"", "'":
            if peek(1) == scalar, peek(2) == scalar { return .string(try multilineString()) }
            return .string(try quotedString())
        case "[":
            return try array(depth: depth)
        case "{":
            return try inlineTable(depth: depth)
        case "t", "f":
            let word = bareWord()
            switch word {
            case "true": return .boolean(true)
            case "false": return .boolean(false)
            default: throw error("expected a value, found \(word) (a string needs quotes)")
            }
        case "0"..."9", "+", "-", "i", "n":
            return try numberOrDate()
        default:
            throw error("expected a value, found \(describe(scalar)) (a string needs quotes)")
        }
    }

    private mutating func array(depth: Int) throws(TOMLSyntaxError) -> TOMLValue {
        index += 1
        var elements: [TOMLValue] = []
        while true {
            try skipSpacesLineBreaksAndComments()
            guard let scalar = peek() else { throw error("the array is not closed with ]") }
            if scalar == "]" {
                index += 1
                return .array(elements)
            }
            elements.append(try value(depth: depth + 1))
            try skipSpacesLineBreaksAndComments()
            switch peek() {
            case ","?: index += 1
            case "]"?: continue
            case let other?: throw error("expected , or ] in the array, found \(describe(other))")
            case nil: throw error("the array is not closed with ]")
            }
        }
    }

    private mutating func inlineTable(depth: Int) throws(TOMLSyntaxError) -> TOMLValue {
        index += 1
        let node = Node(origin: .defined)
        skipSpaces()
        if peek() == "}" {
            index += 1
            return .table(TOMLTable())
        }
        while true {
            skipSpaces()
            if peek() == "\n" || peek() == "\r" { throw error("an inline table must fit on one line") }
            let keys = try dottedKey()
            skipSpaces()
            guard peek() == "=" else { throw error("expected = after the key \(keys.joined(separator: "."))") }
            index += 1
            skipSpaces()
            let value = try value(depth: depth + 1)
            var target = node
            for key in keys.dropLast() { target = try descend(target, key, keys) }
            let last = keys[keys.count - 1]
            guard target.entries[last] == nil else {
                throw error("\(keys.joined(separator: ".")) is defined twice")
            }
            target.entries[last] = .value(value)
            skipSpaces()
            switch peek() {
            case ","?: index += 1
            case "}"?:
                index += 1
                return .table(node.value)
            case let other?:
                throw error("expected , or } in the inline table, found \(describe(other)) (it must fit on one line)")
            case nil: throw error("the inline table is not closed with }")
            }
        }
    }

    /// An integer (decimal, `0x`, `0o`, `0b`, with `_` between digits), a float, `inf`, `nan`, or a date or time.
    private mutating func numberOrDate() throws(TOMLSyntaxError) -> TOMLValue {
        var word = bareWord()
        if Self.looksLikeDate(word) {
            // `1979-05-27 07:32:00`: a date, a space, a time.
            if peek() == " ", let next = peek(1), ("0"..."9").contains(next) {
                index += 1
                word += " " + bareWord()
            }
            guard word.unicodeScalars.allSatisfy(Self.isDateCharacter) else {
                throw error("\(word) is not a date or time")
            }
            return .dateTime(word)
        }
        let scalars = Array(word.unicodeScalars)
        var sign = ""
        var body = scalars[...]
        if let first = body.first, first == "+" || first == "-" {
            sign = first == "-" ? "-" : ""
            body = body.dropFirst()
        }
        let text = String(String.UnicodeScalarView(body))
        switch text {
        case "inf": return .float(sign == "-" ? -.infinity : .infinity)
        case "nan": return .float(.nan)
        default: break
        }
        let radixes: [Unicode.Scalar: Int] = ["x": 16, "o": 8, "b": 2]
        if body.count > 2, body.first == "0", let radix = radixes[body[body.startIndex + 1]] {
            guard body.count == scalars.count else { throw error("\(word): no sign before 0x, 0o or 0b") }
            let digits = body.dropFirst(2)
            guard Self.digitsWithUnderscores(digits, radix: radix),
                let value = Int64(Self.removingUnderscores(digits), radix: radix)
            else { throw error("\(word) is not a number (or does not fit in 64 bits)") }
            return .integer(value)
        }
        if Self.isDecimalInteger(body) {
            guard let value = Int64(sign + Self.removingUnderscores(body)) else {
                throw error("\(word) does not fit in 64 bits")
            }
            return .integer(value)
        }
        if Self.isDecimalFloat(body), let value = Double(sign + Self.removingUnderscores(body)) {
            return .float(value)
        }
        throw error("expected a value, found \(word) (a string needs quotes)")
    }

    // MARK: Strings

    /// A one-line string: basic (`"…"`, with escapes) or literal (`'…'`).
    private mutating func quotedString() throws(TOMLSyntaxError) -> String {
        let quote = scalars[index]
        index += 1
        var text = String.UnicodeScalarView()
        while true {
            guard let scalar = peek() else { throw error("the string is not closed with \(quote)") }
            index += 1
            if scalar == quote { return String(text) }
            if scalar == "\n" || scalar == "\r" {
                index -= 1
                throw error("the string is not closed with \(quote) on its line")
            }
            if quote == "\"", scalar == "\\" {
                text.append(try escape())
                continue
            }
            try checkTextCharacter(scalar)
            text.append(scalar)
        }
    }

    /// A multi-line string: `"""…"""` (escapes, and a backslash that joins lines) or `'''…'''`.
    private mutating func multilineString() throws(TOMLSyntaxError) -> String {
        let quote = scalars[index]
        index += 3
        // A line break right after the opening quotes is not part of the string.
        _ = try takeLineBreak()
        var text = String.UnicodeScalarView()
        while true {
            guard let scalar = peek() else {
                throw error("the multi-line string is not closed with \(quote)\(quote)\(quote)")
            }
            if scalar == quote, peek(1) == quote, peek(2) == quote {
                index += 3
                // Up to two more quotes belong to the string: `""""` is a quote, then the closing three.
                var extra = 0
                while extra < 2, peek() == quote {
                    text.append(quote)
                    index += 1
                    extra += 1
                }
                return String(text)
            }
            if try takeLineBreak() {
                text.append("\n")
                continue
            }
            index += 1
            if quote == "\"", scalar == "\\" {
                // A backslash at the end of a line joins it to the next: the break and leading blanks go.
                var probe = index
                while probe < scalars.count, scalars[probe] == " " || scalars[probe] == "\t" { probe += 1 }
                if probe < scalars.count, scalars[probe] == "\n" || scalars[probe] == "\r" {
                    index = probe
                    while true {
                        skipSpaces()
                        guard try takeLineBreak() else { break }
                    }
                    continue
                }
                text.append(try escape())
                continue
            }
            try checkTextCharacter(scalar)
            text.append(scalar)
        }
    }

    /// The character an escape after `\` stands for.
    private mutating func escape() throws(TOMLSyntaxError) -> Unicode.Scalar {
        guard let scalar = peek() else { throw error("the string ends inside an escape") }
        index += 1
        switch scalar {
        case "b": return "\u{08}"
        case "t": return "\t"
        case "n": return "\n"
        case "f": return "\u{0C}"
        case "r": return "\r"
        case "\"": return "\""
        case "\\": return "\\"
        case "u", "U":
            let count = scalar == "u" ? 4 : 8
            var value: UInt32 = 0
            for _ in 0..<count {
                guard let digit = peek(), let number = Int(String(digit), radix: 16) else {
                    throw error("\\\(scalar) needs \(count) hexadecimal digits")
                }
                value = value &* 16 &+ UInt32(number)
                index += 1
            }
            guard let result = Unicode.Scalar(value) else {
                throw error("\\\(scalar) names no Unicode character (\(String(value, radix: 16, uppercase: true)))")
            }
            return result
        default:
            throw error(
                "\\\(describe(scalar, quoted: false)) is no escape (\\b \\t \\n \\f \\r \\\" \\\\ \\uXXXX \\UXXXXXXXX)")
        }
    }

    private func checkTextCharacter(_ scalar: Unicode.Scalar) throws(TOMLSyntaxError) {
        if scalar == "\t" { return }
        if scalar.value < 0x20 || scalar.value == 0x7F {
            throw error("a control character (\(describe(scalar))) in a string: write it as an escape")
        }
    }

    // MARK: Blanks, comments, line ends

    private func peek(_ offset: Int = 0) -> Unicode.Scalar? {
        index + offset < scalars.count ? scalars[index + offset] : nil
    }

    private mutating func skipSpaces() {
        while let scalar = peek(), scalar == " " || scalar == "\t" { index += 1 }
    }

    /// Takes `\n` or `\r\n`; a lone `\r` is refused.
    private mutating func takeLineBreak() throws(TOMLSyntaxError) -> Bool {
        switch peek() {
        case "\n"?:
            index += 1
            line += 1
            return true
        case "\r"?:
            guard peek(1) == "\n" else { throw error("a carriage return that is not followed by a line feed") }
            index += 2
            line += 1
            return true
        default:
            return false
        }
    }

    private mutating func skipComment() throws(TOMLSyntaxError) {
        while let scalar = peek(), scalar != "\n", scalar != "\r" {
            if scalar != "\t", scalar.value < 0x20 || scalar.value == 0x7F {
                throw error("a control character (\(describe(scalar))) in a comment")
            }
            index += 1
        }
    }

    private mutating func skipSpacesLineBreaksAndComments() throws(TOMLSyntaxError) {
        while true {
            skipSpaces()
            if try takeLineBreak() { continue }
            if peek() == "#" {
                try skipComment()
                continue
            }
            return
        }
    }

    /// After a header or a pair: blanks, perhaps a comment, then the line's end.
    private mutating func endOfLine() throws(TOMLSyntaxError) {
        skipSpaces()
        if peek() == "#" { try skipComment() }
        guard let scalar = peek() else { return }
        guard try takeLineBreak() else {
            throw error("expected the end of the line, found \(describe(scalar))")
        }
    }

    /// Letters, digits and the punctuation of numbers and dates, up to a blank, comma, bracket or comment.
    private mutating func bareWord() -> String {
        var word = String.UnicodeScalarView()
        while let scalar = peek() {
            switch scalar {
            case "A"..."Z", "a"..."z", "0"..."9", "_", "-", "+", ".", ":":
                word.append(scalar)
                index += 1
            default:
                return String(word)
            }
        }
        return String(word)
    }

    private func error(_ message: String) -> TOMLSyntaxError {
        TOMLSyntaxError(message: message, line: line)
    }

    private func describe(_ scalar: Unicode.Scalar, quoted: Bool = true) -> String {
        if scalar.properties.isWhitespace || scalar.properties.generalCategory == .control {
            let hex = String(scalar.value, radix: 16, uppercase: true)
            return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
        }
        return quoted ? "'\(scalar)'" : "\(scalar)"
    }

    // MARK: Character classes and number forms

    private static func isBareKeyCharacter(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "A"..."Z", "a"..."z", "0"..."9", "_", "-": true
        default: false
        }
    }

    /// `1979-05-27…` or `07:32…`.
    private static func looksLikeDate(_ word: String) -> Bool {
        let scalars = Array(word.unicodeScalars.prefix(5))
        func digits(_ range: Range<Int>) -> Bool {
            range.upperBound <= scalars.count && scalars[range].allSatisfy { ("0"..."9").contains($0) }
        }
        return (digits(0..<4) && scalars.count > 4 && scalars[4] == "-")
            || (digits(0..<2) && scalars.count > 2 && scalars[2] == ":")
    }

    private static func isDateCharacter(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "0"..."9", "-", ":", ".", "T", "t", "Z", "z", "+", " ": true
        default: false
        }
    }

    private static func removingUnderscores(_ scalars: ArraySlice<Unicode.Scalar>) -> String {
        String(String.UnicodeScalarView(scalars.filter { $0 != "_" }))
    }

    /// Digits of `radix`, with single underscores only between two digits.
    private static func digitsWithUnderscores(_ scalars: ArraySlice<Unicode.Scalar>, radix: Int) -> Bool {
        guard let first = scalars.first, let last = scalars.last, first != "_", last != "_" else { return false }
        var previous: Unicode.Scalar = "0"
        for scalar in scalars {
            if scalar == "_" {
                if previous == "_" { return false }
            } else if Int(String(scalar), radix: radix) == nil {
                return false
            }
            previous = scalar
        }
        return true
    }

    /// `0`, or digits that do not start with 0.
    private static func isDecimalInteger(_ scalars: ArraySlice<Unicode.Scalar>) -> Bool {
        guard digitsWithUnderscores(scalars, radix: 10) else { return false }
        return scalars.count == 1 || scalars.first != "0"
    }

    /// An integer part, then a fraction (`.5`), an exponent (`e-3`) or both.
    private static func isDecimalFloat(_ scalars: ArraySlice<Unicode.Scalar>) -> Bool {
        let exponentAt = scalars.firstIndex { $0 == "e" || $0 == "E" }
        let mantissa = scalars[..<(exponentAt ?? scalars.endIndex)]
        let dot = mantissa.firstIndex(of: ".")
        guard isDecimalInteger(mantissa[..<(dot ?? mantissa.endIndex)]) else { return false }
        if let dot, !digitsWithUnderscores(mantissa[(dot + 1)...], radix: 10) { return false }
        if let exponentAt {
            var exponent = scalars[(exponentAt + 1)...]
            if let sign = exponent.first, sign == "+" || sign == "-" { exponent = exponent.dropFirst() }
            guard digitsWithUnderscores(exponent, radix: 10) else { return false }
        }
        return dot != nil || exponentAt != nil
    }
}
