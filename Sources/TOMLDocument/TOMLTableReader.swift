/// What is wrong with one key of a table that ``TOMLTableReader`` reads: the reader says it, and its owner turns it
/// into the error of its own configuration (naming the file, and whatever else it knows).
public struct TOMLKeyProblem: Equatable, Sendable {
    /// Which kind of problem this is, for an owner that gives each kind its own code.
    public enum Kind: Equatable, Sendable {
        /// The table holds a key that nobody read: almost always a typo.
        case unknownKey
        /// The value is not of the type the key takes (a string where a number is wanted, …): never coerced.
        case wrongType
        /// The value is of the right type but outside the range the key takes.
        case outOfRange
        /// The owner refused the value by a check of its own (``TOMLTableReader/error(_:_:)``).
        case refused
    }

    /// Which kind of problem this is.
    public var kind: Kind
    /// The key, qualified by the table's path (`sync.url`, `scanner[2].baud`).
    public var key: String
    /// Why, and what would be accepted.
    public var message: String
    /// The value found, when the problem is its type: an owner may say what was written.
    public var found: TOMLValue?

    /// A problem of `kind` with `key`.
    public init(kind: Kind, key: String, message: String, found: TOMLValue? = nil) {
        self.kind = kind
        self.key = key
        self.message = message
        self.found = found
    }
}

/// Reads one TOML table key by key, strictly: each value must have the type asked for (nothing is coerced), and
/// ``finish()`` refuses any key that was not read, so that a typo is named rather than silently ignored.
///
/// Its errors are its owner's: `makeError` turns each ``TOMLKeyProblem`` into the owner's error type, so that a
/// configuration's parser throws one typed error throughout.
public struct TOMLTableReader<Failure: Error> {
    /// The table read.
    public let table: TOMLTable
    /// Where the table is in the document (`sync`, `scanner[2]`); empty for the document itself.
    public let path: String
    /// Said after "unknown key", in parentheses, when not empty: where the keys are documented.
    public let unknownKeyHint: String
    private let makeError: (TOMLKeyProblem) -> Failure
    private var used: Set<String> = []

    /// A reader of `table`, found at `path`, whose problems `makeError` turns into errors.
    public init(
        table: TOMLTable, path: String = "", unknownKeyHint: String = "",
        makeError: @escaping (TOMLKeyProblem) -> Failure
    ) {
        self.table = table
        self.path = path
        self.unknownKeyHint = unknownKeyHint
        self.makeError = makeError
    }

    /// `key` qualified by the table's path.
    public func qualified(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    /// The error refusing `key` for `message`: for the owner's own checks.
    public func error(_ key: String, _ message: String) -> Failure {
        makeError(TOMLKeyProblem(kind: .refused, key: qualified(key), message: message))
    }

    private func problem(
        _ kind: TOMLKeyProblem.Kind, _ key: String, _ message: String, found: TOMLValue? = nil
    ) -> Failure {
        makeError(TOMLKeyProblem(kind: kind, key: qualified(key), message: message, found: found))
    }

    /// Whether the table holds `key` (which does not count as reading it).
    public func contains(_ key: String) -> Bool { table.entries[key] != nil }

    private mutating func value(_ key: String) -> TOMLValue? {
        used.insert(key)
        return table.entries[key]
    }

    /// The string at `key`, if there is one.
    public mutating func string(_ key: String) throws(Failure) -> String? {
        guard let value = value(key) else { return nil }
        guard case .string(let text) = value else {
            throw problem(.wrongType, key, "must be a string (in quotes)", found: value)
        }
        return text
    }

    /// The boolean at `key`, if there is one.
    public mutating func bool(_ key: String) throws(Failure) -> Bool? {
        guard let value = value(key) else { return nil }
        guard case .boolean(let flag) = value else {
            throw problem(.wrongType, key, "must be true or false", found: value)
        }
        return flag
    }

    /// The number (an integer or a float) at `key`, if there is one, in `range`.
    public mutating func number(_ key: String, in range: ClosedRange<Double>) throws(Failure) -> Double? {
        guard let value = value(key) else { return nil }
        let number: Double
        switch value {
        case .float(let float): number = float
        case .integer(let integer): number = Double(integer)
        default: throw problem(.wrongType, key, "must be a number", found: value)
        }
        guard range.contains(number) else {
            throw problem(
                .outOfRange, key,
                "must be between \(Self.format(range.lowerBound)) and \(Self.format(range.upperBound))")
        }
        return number
    }

    /// The integer at `key`, if there is one, in `range`: a float, even a whole one (`60.0`), is refused.
    public mutating func integer(_ key: String, in range: ClosedRange<Int64>) throws(Failure) -> Int64? {
        guard let value = value(key) else { return nil }
        guard case .integer(let integer) = value else {
            throw problem(.wrongType, key, "must be a whole number (an integer, without quotes)", found: value)
        }
        guard range.contains(integer) else {
            let message =
                range.upperBound == .max
                ? "must be at least \(range.lowerBound)" : "must be between \(range.lowerBound) and \(range.upperBound)"
            throw problem(.outOfRange, key, message)
        }
        return integer
    }

    /// The array of strings at `key`, if there is one.
    public mutating func strings(_ key: String) throws(Failure) -> [String]? {
        guard let value = value(key) else { return nil }
        guard case .array(let array) = value else {
            throw problem(.wrongType, key, "must be a list of strings, e.g. [\"a\", \"b\"]", found: value)
        }
        var result: [String] = []
        for element in array {
            guard case .string(let text) = element else {
                throw problem(.wrongType, key, "must hold only strings", found: element)
            }
            result.append(text)
        }
        return result
    }

    /// A reader of the table at `key`, if there is one.
    public mutating func table(_ key: String) throws(Failure) -> Self? {
        guard let value = value(key) else { return nil }
        guard case .table(let table) = value else {
            throw problem(.wrongType, key, "must be a table ([\(qualified(key))])", found: value)
        }
        return nested(table, path: qualified(key))
    }

    /// Readers of the array of tables at `key` (`[[scanner]]`), each at `key[N]` counted from 1; a single table
    /// (`[scanner]`) is accepted as a list of one.
    public mutating func tables(_ key: String) throws(Failure) -> [Self] {
        guard let value = value(key) else { return [] }
        if case .table(let table) = value { return [nested(table, path: qualified(key))] }
        guard case .array(let array) = value else {
            throw problem(.wrongType, key, "must be an array of tables ([[\(qualified(key))]])", found: value)
        }
        var result: [Self] = []
        for (index, element) in array.enumerated() {
            guard case .table(let table) = element else {
                throw problem(.wrongType, key, "must hold only tables", found: element)
            }
            result.append(nested(table, path: "\(qualified(key))[\(index + 1)]"))
        }
        return result
    }

    /// Refuses the first key (in sorted order) that was not read: almost always a typo.
    public func finish() throws(Failure) {
        for key in table.entries.keys.sorted() where !used.contains(key) {
            throw problem(.unknownKey, key, unknownKeyHint.isEmpty ? "unknown key" : "unknown key (\(unknownKeyHint))")
        }
    }

    private func nested(_ table: TOMLTable, path: String) -> Self {
        Self(table: table, path: path, unknownKeyHint: unknownKeyHint, makeError: makeError)
    }

    private static func format(_ number: Double) -> String {
        number == number.rounded() ? String(Int(number)) : String(number)
    }
}
