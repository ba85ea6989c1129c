/// The host names an HTTP endpoint answers to, lowercased, without ports: the daemon's page (`[http] hosts`) and
/// the reference server (`farecheck-server serve --allowed-host`).
///
/// A DNS-rebinding attack points a name the attacker owns (`evil.example`) at the endpoint's address, so that the
/// attacker's page reads the endpoint as its own origin; the browser then sends `Host: evil.example`. An endpoint
/// that answers only to its own names (and its addresses, which no attacker's name can be) gives that page nothing.
public struct AllowedHosts: Sendable, Equatable {
    /// The names, normalised (lowercase, no brackets, no final dot).
    public var names: Set<String>

    /// The names given, normalised.
    public init(_ names: some Sequence<String>) {
        self.names = Set(names.map { Self.normalized($0) })
    }

    /// Whether a `Host` header value (a name or address, perhaps with a port, IPv6 in brackets) is one of these.
    public func allows(_ hostHeader: String?) -> Bool {
        guard let hostHeader, !hostHeader.isEmpty else { return false }
        return names.contains(Self.normalized(Self.hostPart(of: hostHeader)))
    }

    /// `name:port` → `name`, `[v6]:port` → `v6`.
    static func hostPart(of authority: String) -> String {
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return authority }
            return String(authority[authority.index(after: authority.startIndex)..<close])
        }
        if let colon = authority.lastIndex(of: ":"), authority.firstIndex(of: ":") == colon {
            return String(authority[..<colon])
        }
        return authority
    }

    static func normalized(_ name: String) -> String {
        var name = name.lowercased()
        if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        if name.hasSuffix("."), name.count > 1 { name.removeLast() }
        return name
    }
}
