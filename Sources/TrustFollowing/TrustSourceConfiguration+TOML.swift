import FareCore
import Foundation
import TOMLDocument
import TrustSources

// Reading the `[[trust.source]]` entries from TOML text: pure (no file is opened, no URL fetched), so it is tested on
// text. Only the `[trust]` table is this reader's: the server's configuration file may hold other sections, read by
// others.

extension TrustFollowingConfiguration {
    /// The keys a `[[trust.source]]` takes, as the configuration writes them.
    public static let sourceKeys = [
        "name", "kind", "url", "version_url", "ldap_base", "period", "jitter", "tls_ca", "tls_spki", "max_bytes",
        "head_timeout", "body_timeout", "max_drop_share", "protect_keys_used_within_days", "min_kept_share",
        "stale_after", "allow_plain_http",
    ]

    /// Reads the `[[trust.source]]` entries of the configuration `text`; `file` names it in errors.
    ///
    /// Tables other than `[trust]` are left to their readers. Inside `[trust]` and each `[[trust.source]]` every key
    /// must be known and of its type (a string where a number is wanted is refused, never coerced). No
    /// `[[trust.source]]`: the server follows nothing.
    public static func parse(_ text: String, file: String) throws(TrustConfigurationError)
        -> TrustFollowingConfiguration
    {
        let document: TOMLTable
        do {
            document = try TOMLReader.read(text)
        } catch {
            throw TrustConfigurationError(
                code: .syntax, message: "\(file): line \(error.line): \(error.message)",
                details: .init(file: file, line: error.line))
        }
        guard let trustValue = document.entries["trust"] else { return TrustFollowingConfiguration() }
        let place = SourcePlace(file: file, source: nil)
        guard case .table(let trustTable) = trustValue else {
            throw place.error(.wrongType, key: "trust", "must be a table ([trust], or [[trust.source]] entries)")
        }
        var trust = TOMLTableReader(
            table: trustTable, path: "trust", unknownKeyHint: "[trust] holds only [[trust.source]] entries",
            makeError: place.error(for:))
        // `[trust.source]` (one table) reads as a list of one, as `[[trust.source]]` does.
        let entries = try trust.tables("source")
        try trust.finish()

        var sources: [TrustSourceConfiguration] = []
        var placeOfName: [String: Int] = [:]
        for (offset, entry) in entries.enumerated() {
            let number = offset + 1
            let source = try parseSource(entry.table, number: number, file: file)
            if let first = placeOfName[source.name] {
                throw SourcePlace(file: file, source: "\"\(source.name)\"").error(
                    .duplicateName, key: "name",
                    "is the name of [[trust.source]] #\(first) too (this is #\(number)): each source needs a name "
                        + "of its own, as status and `trust fetch SOURCE` name it")
            }
            placeOfName[source.name] = number
            sources.append(source)
        }
        return TrustFollowingConfiguration(sources: sources)
    }

    /// Reads the `[[trust.source]]` entries of the file at `path`.
    public static func load(path: String) throws(TrustConfigurationError) -> TrustFollowingConfiguration {
        guard let data = FileManager.default.contents(atPath: path) else {
            let reason =
                FileManager.default.fileExists(atPath: path)
                ? "cannot be read by this user"
                : "no such file (create it from Config/farecheck-server.toml)"
            throw TrustConfigurationError(
                code: .unreadable, message: "\(path): \(reason)", details: .init(file: path))
        }
        return try parse(String(decoding: data, as: UTF8.self), file: path)
    }

    // MARK: One source

    private static func parseSource(_ table: TOMLTable, number: Int, file: String) throws(TrustConfigurationError)
        -> TrustSourceConfiguration
    {
        // Until its name is read and checked, the source is named by its place.
        let byPlace = SourcePlace(file: file, source: "#\(number)")
        var probe = TOMLTableReader(table: table, makeError: byPlace.error(for:))
        // Unknown keys first: a misspelt `url` is better named as such than reported missing.
        let known = Set(sourceKeys)
        if let unknown = table.entries.keys.sorted().first(where: { !known.contains($0) }) {
            let written = (try? probe.string("name")).flatMap { $0 }
            let label = written.flatMap { isValidName($0) ? "\"\($0)\"" : nil } ?? "#\(number)"
            throw SourcePlace(file: file, source: label).error(
                .unknownKey, key: unknown,
                "unknown key (a [[trust.source]] takes \(sourceKeys.joined(separator: ", ")); see "
                    + "Config/farecheck-server.toml)")
        }
        guard let name = try probe.string("name") else {
            throw byPlace.error(
                .missingKey, key: "name", "is required: the source's name, 1 to 64 of a-z, 0-9 and -, e.g. \"uic\"")
        }
        guard isValidName(name) else {
            throw byPlace.error(
                .invalidValue, key: "name", "must be 1 to 64 of a-z, 0-9 and -, e.g. \"uic\" (got \"\(name)\")")
        }

        let place = SourcePlace(file: file, source: "\"\(name)\"")
        var reader = TOMLTableReader(table: table, makeError: place.error(for:))
        _ = try reader.string("name")
        let kinds = TrustSourceKind.allCases.map(\.rawValue).joined(separator: ", ")
        guard let kindName = try reader.string("kind") else {
            throw place.error(.missingKey, key: "kind", "is required: one of \(kinds)")
        }
        guard let kind = TrustSourceKind(rawValue: kindName) else {
            throw place.error(.invalidValue, key: "kind", "must be one of \(kinds) (got \"\(kindName)\")")
        }
        var source = TrustSourceConfiguration(name: name, kind: kind, url: "")
        try refuseKeys(of: table, notTakenBy: kind, at: place)
        source.allowPlainHTTP = try reader.bool("allow_plain_http") ?? false

        guard let url = try reader.string("url") else {
            throw place.error(
                .missingKey, key: "url", "is required: where the \(kind.rawValue) is published, e.g. \(example(kind))")
        }
        try checkURL(url, key: "url", kind: kind, allowPlain: source.allowPlainHTTP, at: place)
        source.url = url
        if let versionURL = try reader.string("version_url") {
            try checkURL(versionURL, key: "version_url", kind: kind, allowPlain: source.allowPlainHTTP, at: place)
            source.versionURL = versionURL
        }
        if let base = try reader.string("ldap_base") {
            guard !base.isEmpty, base.contains("=") else {
                throw place.error(
                    .invalidValue, key: "ldap_base",
                    "must be a DN such as \"\(TrustSourceConfiguration.vdvProductionBase)\" (got \"\(base)\")")
            }
            source.ldapBase = base
        }

        if let period = try reader.integer("period", in: Int64.min...Int64.max) {
            guard (60...maximumSeconds).contains(period) else {
                throw place.error(
                    .invalidValue, key: "period",
                    "must be at least 60 seconds (and at most \(maximumSeconds), a year), got \(period)")
            }
            source.period = .seconds(period)
        } else {
            source.period = kind.defaultPeriod
        }
        if let jitter = try reader.number("jitter", in: 0...0.5) { source.jitter = jitter }

        let tlsCA = try reader.string("tls_ca")
        let pins = try reader.strings("tls_spki")
        switch (tlsCA, pins) {
        case (.some, .some):
            throw place.error(
                .conflict, key: "tls_spki",
                "give tls_ca (a publisher's private CA) or tls_spki (pinned keys), not both")
        case (let path?, nil):
            guard !path.isEmpty else {
                throw place.error(.invalidValue, key: "tls_ca", "must be the path of a PEM file of CA certificates")
            }
            source.trust = .pinnedCA(path: path)
        case (nil, let pins?):
            guard !pins.isEmpty else {
                throw place.error(
                    .invalidValue, key: "tls_spki",
                    "must list at least one pin (or leave tls_spki out to trust the system's CAs)")
            }
            for pin in pins where Data(base64Encoded: pin)?.count != 32 {
                throw place.error(
                    .invalidValue, key: "tls_spki",
                    "\"\(pin)\" is not a base64 SHA-256 (44 characters, as `openssl pkey -pubin -outform der | "
                        + "openssl dgst -sha256 -binary | base64` prints it)")
            }
            source.trust = .pinnedSPKI(pins)
        case (nil, nil):
            source.trust = .systemCAs
        }

        if let bytes = try reader.integer("max_bytes", in: 1...Int64.max) { source.maximumBytes = Int(bytes) }
        if let timeout = try timeout("head_timeout", &reader, at: place) { source.headTimeout = timeout }
        if let timeout = try timeout("body_timeout", &reader, at: place) { source.bodyTimeout = timeout }
        if let share = try reader.number("max_drop_share", in: 0...1) { source.maximumDropShare = share }
        if let days = try reader.integer("protect_keys_used_within_days", in: 0...3650) {
            source.protectKeysUsedWithinDays = Int(days)
        }
        if let share = try reader.number("min_kept_share", in: 0...1) { source.minimumKeptShare = share }
        if let stale = try reader.integer("stale_after", in: Int64.min...Int64.max) {
            let period = source.period.components.seconds
            guard (period...(10 * maximumSeconds)).contains(stale) else {
                throw place.error(
                    .invalidValue, key: "stale_after",
                    "must be seconds at least the period (\(period) s): a source is not stale before its next fetch "
                        + "is due (got \(stale))")
            }
            source.staleAfter = .seconds(stale)
        } else {
            source.staleAfter = source.period * 3
        }
        try reader.finish()
        return source
    }

    /// The longest period accepted, in seconds (a year): any longer is a mistake, and keeps durations far from
    /// overflowing.
    private static let maximumSeconds: Int64 = 365 * 86_400

    /// Whether `name` is 1 to 64 of `a-z`, `0-9`, `-`.
    private static func isValidName(_ name: String) -> Bool {
        (1...64).contains(name.unicodeScalars.count)
            && name.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" }
    }

    /// Refuses the keys that `kind` does not take, naming the kinds that do.
    private static func refuseKeys(
        of table: TOMLTable, notTakenBy kind: TrustSourceKind, at place: SourcePlace
    ) throws(TrustConfigurationError) {
        let blocklists: [TrustSourceKind] = [.vdvBlocklist, .dtvgBlocklist]
        let keyKinds = TrustSourceKind.allCases.filter(\.publishesKeys)
        let restricted: [(key: String, kinds: [TrustSourceKind])] = [
            ("version_url", blocklists), ("ldap_base", [.vdvLDAP]),
            ("tls_spki", TrustSourceKind.allCases.filter { $0 != .vdvLDAP }),
            ("max_drop_share", keyKinds), ("protect_keys_used_within_days", keyKinds),
            ("min_kept_share", TrustSourceKind.allCases.filter { !$0.publishesKeys }),
        ]
        for (key, kinds) in restricted where table.entries[key] != nil && !kinds.contains(kind) {
            let why = key == "tls_spki" ? " (an SPKI pin is checked for HTTPS only: give tls_ca for LDAPS)" : ""
            throw place.error(
                .notForKind, key: key,
                "is only for \(kinds.map(\.rawValue).joined(separator: ", ")) sources, not \(kind.rawValue)\(why)")
        }
    }

    /// Refuses a URL whose scheme the kind does not fetch over, or plain text unless allowed.
    private static func checkURL(
        _ url: String, key: String, kind: TrustSourceKind, allowPlain: Bool, at place: SourcePlace
    ) throws(TrustConfigurationError) {
        let (secure, plain) = kind == .vdvLDAP ? ("ldaps", "ldap") : ("https", "http")
        guard let parts = URLComponents(string: url), let scheme = parts.scheme?.lowercased(),
            scheme == secure || scheme == plain, let host = parts.host, !host.isEmpty
        else {
            throw place.error(
                .invalidValue, key: key,
                "must be an \(secure):// URL such as \(example(kind)) (got \"\(url)\")")
        }
        guard scheme == secure || allowPlain else {
            throw place.error(
                .invalidValue, key: key,
                "is plain \(plain):// (\"\(url)\"): trust data is fetched over \(secure):// only; use the publisher's "
                    + "\(secure):// URL (allow_plain_http = true is for a test publisher on this host)")
        }
    }

    /// A publisher URL of `kind`, for messages.
    private static func example(_ kind: TrustSourceKind) -> String {
        switch kind {
        case .uicKeyList: "https://railpublickey.uic.org/download.php"
        case .vdvLDAP: "ldaps://ldap-vdv-ion.telesec.de:636"
        case .vdvBlocklist: "https://blocklists.example.org/vdv/blacklist.db"
        case .dtvgBlocklist: "https://blocklists.example.org/dtvg/blacklistuic.zip"
        case .rsp6KeyList: "https://keys.example.org/rsp6/keys.json"
        }
    }

    /// A timeout in seconds: more than 0 (fractions allowed), at most a day.
    private static func timeout(
        _ key: String, _ reader: inout TOMLTableReader<TrustConfigurationError>, at place: SourcePlace
    ) throws(TrustConfigurationError) -> Duration? {
        guard let seconds = try reader.number(key, in: 0...86_400) else { return nil }
        guard seconds > 0 else { throw place.error(.invalidValue, key: key, "must be more than 0 seconds") }
        return .seconds(seconds)
    }
}

/// Where a fault is: the file and, inside `[trust]`, the source; makes the errors that say so.
private struct SourcePlace {
    let file: String
    /// `"name"` or `#N`; nil for the `[trust]` table itself.
    let source: String?

    /// An error at `key` of this place, saying `reason`.
    func error(_ code: TrustConfigurationError.Code, key: String, _ reason: String) -> TrustConfigurationError {
        let location = source.map { "[[trust.source]] \($0): " } ?? ""
        return TrustConfigurationError(
            code: code, message: "\(file): \(location)\(key): \(reason)",
            details: .init(file: file, source: source, key: key))
    }

    /// The error for a problem the table reader found, saying what was written when its type is wrong.
    func error(for problem: TOMLKeyProblem) -> TrustConfigurationError {
        let code: TrustConfigurationError.Code
        var reason = problem.message
        switch problem.kind {
        case .unknownKey: code = .unknownKey
        case .wrongType:
            code = .wrongType
            switch problem.found {
            case .string(let text)?: reason += " (got the string \"\(text)\")"
            case let found?: reason += " (got \(found.kindName))"
            case nil: break
            }
        case .outOfRange, .refused: code = .invalidValue
        }
        return error(code, key: problem.key, reason)
    }
}
