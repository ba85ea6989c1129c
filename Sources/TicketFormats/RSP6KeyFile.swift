import Foundation

/// What a published RSP6 key is for: tickets in service, or an issuer's tests (the key list's `is_test`).
public enum RSP6KeyUse: Sendable, Hashable {
    /// Tickets in service: a key the list does not mark as a test key.
    case live
    /// Test tickets: the key list marks the key `is_test`. What it signs is no ticket in service.
    case test
}

/// What the published key list says about a key besides its numbers: when it may sign, and what for.
public struct RSP6KeyTerms: Sendable, Hashable {
    /// The list's `valid_from` (UK time), or `nil` when it sets no start.
    public var validFrom: Date?
    /// The list's `valid_until` (UK time), or `nil` when it sets no end.
    public var validUntil: Date?
    /// Live, or a test key.
    public var use: RSP6KeyUse

    public init(validFrom: Date? = nil, validUntil: Date? = nil, use: RSP6KeyUse = .live) {
        self.validFrom = validFrom
        self.validUntil = validUntil
        self.use = use
    }

    /// No limits, live: a key of the `{"n", "e"}` form, which says nothing more.
    public static let unlimited = RSP6KeyTerms()

    /// The terms of one key listed twice: a test key if either entry says so, valid only when both say it is (the
    /// later start, the earlier end), so that neither entry's limits are lost.
    public func merged(with other: RSP6KeyTerms) -> RSP6KeyTerms {
        func later(_ a: Date?, _ b: Date?) -> Date? { [a, b].compactMap { $0 }.max() }
        func earlier(_ a: Date?, _ b: Date?) -> Date? { [a, b].compactMap { $0 }.min() }
        return RSP6KeyTerms(
            validFrom: later(validFrom, other.validFrom), validUntil: earlier(validUntil, other.validUntil),
            use: use == .test || other.use == .test ? .test : .live)
    }
}

/// One public key an RSP6 issuer publishes: its RSA modulus and exponent, and the list's terms for it.
public struct RSP6PublishedKey: Sendable, Hashable {
    /// The issuer id the key signs for (`TT`), as RSP6 texts carry it in characters 13–14.
    public var issuer: String
    /// The modulus n and the public exponent e, big-endian, as published.
    public var modulus: [UInt8]
    public var exponent: [UInt8]
    /// Its validity and use as the key list gives them (`unlimited` for the `{"n", "e"}` form).
    public var terms: RSP6KeyTerms

    public init(issuer: String, modulus: [UInt8], exponent: [UInt8], terms: RSP6KeyTerms = .unlimited) {
        self.issuer = issuer
        self.modulus = modulus
        self.exponent = exponent
        self.terms = terms
    }
}

/// One entry of an RSP6 key file as read: where it is, and what it holds (a key, or why it is no key).
public struct RSP6KeyFileEntry: Sendable {
    /// Where an entry is in the file, as messages name it: `TT entry 3` (counted from 1 in the issuer's array), or
    /// `issuer TT` for an issuer's whole value.
    public struct Position: Sendable, Hashable, Comparable, CustomStringConvertible {
        /// The issuer the entry is listed under, as the file writes it (upper case when it is an issuer id).
        public var issuer: String
        /// The entry's number in the issuer's array, from 1; `nil` for the issuer's value as a whole.
        public var number: Int?

        public init(issuer: String, number: Int?) {
            self.issuer = issuer
            self.number = number
        }

        public var description: String { number.map { "\(issuer) entry \($0)" } ?? "issuer \(issuer)" }

        public static func < (a: Position, b: Position) -> Bool {
            (a.issuer, a.number ?? 0) < (b.issuer, b.number ?? 0)
        }
    }

    /// What an entry holds.
    public enum Content: Sendable {
        /// A key given by its numbers (`n`/`e` in base64, or `modulus_hex`/`public_exponent_hex`); `x509` is the
        /// entry's `public_key_x509` when it gives that too (it must be the same key).
        case key(RSP6PublishedKey, x509: [UInt8]?)
        /// A key given only in its X.509 form (`public_key_x509`: a PEM, or base64 of the DER), read on import.
        case x509([UInt8], issuer: String, terms: RSP6KeyTerms)
        /// An entry the list marks `is_private`: not a key the issuer publishes for checking tickets.
        case markedPrivate
        /// An entry that cannot be read, and why (a sentence).
        case malformed(String)
    }

    /// Where the entry is.
    public var position: Position
    /// What it holds.
    public var content: Content

    public init(position: Position, content: Content) {
        self.position = position
        self.content = content
    }
}

/// The files RSP6 issuers' public keys are published in, in their two forms (docs/uk-rsp6.md, "Keys"):
///
/// - A JSON array of `{"n": base64, "e": base64}` per issuer (the issuer named by the file, `TT.json`), or one
///   object keyed by issuer id whose values are such arrays (KDE Itinerary's form).
/// - The list the open decoders share: one object keyed by issuer id whose values are arrays of `{"issuer_id",
///   "modulus_hex", "public_exponent_hex", "valid_from", "valid_until", "is_test", "is_private",
///   "public_key_x509"}` (hex in either case; dates `YYYY-MM-DD hh:mm:ss`, UK time).
///
/// Each entry is read on its own, in whichever form it is written: an entry that cannot be read is reported with
/// its position and never costs the others.
public enum RSP6KeyFile {
    /// Whether `text` is an issuer id as RSP6 texts carry it: two characters, `A`–`Z` or `0`–`9`.
    public static func isIssuerID(_ text: String) -> Bool {
        text.utf8.count == 2
            && text.utf8.allSatisfy { (0x41...0x5A).contains($0) || (0x30...0x39).contains($0) }
    }

    /// The issuer id a per-issuer file's name gives (`TT.json`, `keys/tt.json` → `TT`), or `nil`.
    public static func issuer(fromFileName name: String) -> String? {
        let stem = ((name as NSString).lastPathComponent as NSString).deletingPathExtension.uppercased()
        return isIssuerID(stem) ? stem : nil
    }

    /// Every entry of `json`, each read on its own, in the order of the file (issuers sorted).
    ///
    /// - Parameter issuer: the issuer of a per-issuer array (required for one); with a file keyed by issuer, only
    ///   that issuer's entries are read (`nil`: every issuer's).
    /// - Throws: `malformed` when the file is not JSON (naming the line and column where it stops being JSON), is
    ///   neither an array nor an object, is an array and no issuer is named, names an issuer that is not two
    ///   letters or digits, or is keyed by issuer and has no entries of `issuer`. Everything wrong inside an
    ///   issuer's value is an entry's `malformed` content instead.
    public static func entries(parsing json: [UInt8], issuer: String?) throws(FormatError) -> [RSP6KeyFileEntry] {
        let document = try parseJSON(json)
        if let issuer, !isIssuerID(issuer) {
            throw .malformed("the issuer id \"\(issuer)\" is not two letters or digits, as RSP6 tickets write it")
        }
        if let array = document as? [Any] {
            guard let issuer else {
                throw .malformed(
                    "the RSP6 key file is one issuer's array of keys: name the issuer (an id such as TT, or the "
                        + "file TT.json)")
            }
            return entries(array, issuer: issuer)
        }
        guard let byIssuer = document as? [String: Any] else {
            throw .malformed(
                "the RSP6 key file is neither an array of keys nor an object keyed by issuer id")
        }
        var entries: [RSP6KeyFileEntry] = []
        for name in byIssuer.keys.sorted() where issuer == nil || name.uppercased() == issuer {
            let id = name.uppercased()
            guard isIssuerID(id) else {
                entries.append(
                    RSP6KeyFileEntry(
                        position: .init(issuer: name, number: nil),
                        content: .malformed(
                            "\"\(name)\" is no issuer id (two letters or digits, as RSP6 tickets "
                                + "write it)")))
                continue
            }
            guard let array = byIssuer[name] as? [Any] else {
                entries.append(
                    RSP6KeyFileEntry(
                        position: .init(issuer: id, number: nil),
                        content: .malformed("the issuer's keys are not an array")))
                continue
            }
            entries += Self.entries(array, issuer: id)
        }
        if let issuer, entries.isEmpty {
            throw .malformed("the RSP6 key file holds no keys of issuer \(issuer)")
        }
        return entries
    }

    /// The keys in `json`, every entry a key given by its numbers, or none: for files that must be whole (tests,
    /// fuzzing, benchmarks). `farecheck keys import` reads `entries(parsing:issuer:)` and refuses entries one by one.
    ///
    /// - Throws: what `entries(parsing:issuer:)` throws, and `malformed` naming the first entry that is not a key
    ///   given by its numbers.
    public static func keys(parsing json: [UInt8], issuer: String?) throws(FormatError) -> [RSP6PublishedKey] {
        var keys: [RSP6PublishedKey] = []
        for entry in try entries(parsing: json, issuer: issuer) {
            switch entry.content {
            case .key(let key, _): keys.append(key)
            case .x509: throw .malformed("\(entry.position) gives its key only in its X.509 form")
            case .markedPrivate: throw .malformed("\(entry.position) is marked is_private")
            case .malformed(let why): throw .malformed("\(entry.position): \(why)")
            }
        }
        return keys
    }

    // MARK: Reading

    /// The document, or `malformed` naming where the text stops being JSON.
    private static func parseJSON(_ json: [UInt8]) throws(FormatError) -> Any {
        do {
            return try JSONSerialization.jsonObject(with: Data(json))
        } catch {
            let detail = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String
            throw .malformed("the RSP6 key file is not JSON: \(describe(where: detail, in: json))")
        }
    }

    /// The parser's sentence with its character offset (`around character 20`) said as a line and column too.
    private static func describe(where detail: String?, in json: [UInt8]) -> String {
        guard let detail else { return "it cannot be read as JSON" }
        let trimmed = detail.hasSuffix(".") ? String(detail.dropLast()) : detail
        guard let match = trimmed.firstMatch(of: #/character (\d+)/#), let offset = Int(match.output.1),
            offset <= json.count
        else { return trimmed }
        let before = json.prefix(offset)
        let line = before.count { $0 == 0x0A } + 1
        let column = offset - (before.lastIndex(of: 0x0A).map { $0 + 1 } ?? 0) + 1
        return "\(trimmed) (line \(line), column \(column))"
    }

    /// The entries of one issuer's array.
    private static func entries(_ array: [Any], issuer: String) -> [RSP6KeyFileEntry] {
        array.enumerated().map { index, value in
            let position = RSP6KeyFileEntry.Position(issuer: issuer, number: index + 1)
            return RSP6KeyFileEntry(position: position, content: content(of: value, issuer: issuer))
        }
    }

    /// What one entry holds, in whichever form it is written.
    private static func content(of value: Any, issuer: String) -> RSP6KeyFileEntry.Content {
        guard let object = value as? [String: Any] else {
            return .malformed("not an object with a key (\"n\" and \"e\", or \"modulus_hex\")")
        }
        let published = ["modulus_hex", "public_exponent_hex", "public_key_x509", "issuer_id"].contains {
            object[$0] != nil
        }
        do throws(EntryProblem) {
            return published ? try listed(object, issuer: issuer) : try own(object, issuer: issuer)
        } catch {
            return .malformed(error.message)
        }
    }

    /// An entry of the `{"n", "e"}` form.
    private static func own(_ object: [String: Any], issuer: String) throws(EntryProblem) -> RSP6KeyFileEntry.Content {
        func number(_ name: String) throws(EntryProblem) -> [UInt8] {
            guard let text = object[name] as? String, let data = Data(base64Encoded: text), !data.isEmpty else {
                throw EntryProblem("no \"\(name)\" in base64")
            }
            return Array(data)
        }
        let key = RSP6PublishedKey(issuer: issuer, modulus: try number("n"), exponent: try number("e"))
        return .key(key, x509: nil)
    }

    /// An entry of the published list's form.
    private static func listed(_ object: [String: Any], issuer: String) throws(EntryProblem)
        -> RSP6KeyFileEntry.Content
    {
        // Read first, and whatever else is wrong: a private entry is refused as private.
        if try flag("is_private", in: object) { return .markedPrivate }
        if let named = try text("issuer_id", in: object), named.uppercased() != issuer {
            throw EntryProblem("its issuer_id is \"\(named)\", but it is listed under issuer \(issuer)")
        }
        let from = try date("valid_from", in: object, endOfDay: false)
        let until = try date("valid_until", in: object, endOfDay: true)
        if let from, let until, until < from {
            throw EntryProblem("valid_until is before valid_from")
        }
        let terms = RSP6KeyTerms(
            validFrom: from, validUntil: until, use: try flag("is_test", in: object) ? .test : .live)
        let x509 = try text("public_key_x509", in: object).map { Array($0.utf8) }
        let modulus = try text("modulus_hex", in: object)
        let exponent = try text("public_exponent_hex", in: object)
        switch (modulus, exponent) {
        case (let modulus?, let exponent?):
            let key = RSP6PublishedKey(
                issuer: issuer, modulus: try hexNumber(modulus, "modulus_hex"),
                exponent: try hexNumber(exponent, "public_exponent_hex"), terms: terms)
            return .key(key, x509: x509)
        case (nil, nil):
            guard let x509 else {
                throw EntryProblem("it has neither modulus_hex and public_exponent_hex nor public_key_x509")
            }
            return .x509(x509, issuer: issuer, terms: terms)
        default:
            guard let x509 else {
                let given = modulus == nil ? "public_exponent_hex" : "modulus_hex"
                let missing = modulus == nil ? "modulus_hex" : "public_exponent_hex"
                throw EntryProblem("it has \(given) without \(missing)")
            }
            return .x509(x509, issuer: issuer, terms: terms)
        }
    }

    /// A text field; `nil` when absent or null.
    private static func text(_ name: String, in object: [String: Any]) throws(EntryProblem) -> String? {
        guard let value = object[name], !(value is NSNull) else { return nil }
        guard let text = value as? String else { throw EntryProblem("\(name) is not text") }
        return text
    }

    /// A true/false field; false when absent or null.
    private static func flag(_ name: String, in object: [String: Any]) throws(EntryProblem) -> Bool {
        guard let value = object[name], !(value is NSNull) else { return false }
        guard !(value is String), let flag = value as? Bool else { throw EntryProblem("\(name) is not true or false") }
        return flag
    }

    /// A big-endian number written in hex (either case, any length; `0x` allowed).
    private static func hexNumber(_ text: String, _ name: String) throws(EntryProblem) -> [UInt8] {
        var digits = Substring(text.trimmingCharacters(in: .whitespaces))
        if digits.hasPrefix("0x") || digits.hasPrefix("0X") { digits = digits.dropFirst(2) }
        let nibbles = digits.compactMap { $0.hexDigitValue.map { UInt8($0) } }
        guard !nibbles.isEmpty, nibbles.count == digits.count else {
            throw EntryProblem("\(name) is not a number in hex")
        }
        let padded = nibbles.count % 2 == 1 ? [0] + nibbles : nibbles
        return stride(from: 0, to: padded.count, by: 2).map { padded[$0] << 4 | padded[$0 + 1] }
    }

    /// A date-time of the list (`2023-01-31 00:00:00`, UK time; a bare day means its start, or its end for
    /// `valid_until`); `nil` when absent or null.
    private static func date(_ name: String, in object: [String: Any], endOfDay: Bool) throws(EntryProblem) -> Date? {
        guard let text = try text(name, in: object) else { return nil }
        let problem = EntryProblem("\(name) \"\(text)\" is not a date-time YYYY-MM-DD hh:mm:ss")
        let match = text.trimmingCharacters(in: .whitespaces).wholeMatch(
            of: #/(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2})(?::(\d{2}))?)?/#)
        guard let match, let day = UICDay(year: Int(match.1)!, month: Int(match.2)!, day: Int(match.3)!) else {
            throw problem
        }
        guard let hourText = match.4, let minuteText = match.5 else {
            return endOfDay ? UKTime.date(day, hour: 23, minute: 59, second: 59) : UKTime.date(day, hour: 0, minute: 0)
        }
        let hour = Int(hourText)!
        let minute = Int(minuteText)!
        let second = match.6.map { Int($0)! } ?? 0
        guard hour < 24, minute < 60, second < 60 else { throw problem }
        return UKTime.date(day, hour: hour, minute: minute, second: second)
    }

    /// Why an entry cannot be read: becomes its `malformed` content.
    private struct EntryProblem: Error {
        let message: String
        init(_ message: String) { self.message = message }
    }
}
