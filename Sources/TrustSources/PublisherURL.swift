import Foundation

/// A URL to fetch, split into what a connection and a request need.
struct PublisherURL: Sendable, Hashable {
    /// The URL as written (after redirects, as resolved).
    let text: String
    /// Whether the scheme is `https`.
    let isSecure: Bool
    /// The host, lowercased, without brackets.
    let host: String
    let port: Int
    /// The request target: path and query.
    let target: String

    /// `text` as a URL to fetch.
    ///
    /// - Throws: `.misconfigured` for anything but an absolute http(s) URL with a host, and for `http://` unless
    ///   `allowsPlainHTTP`.
    init(_ text: String, allowsPlainHTTP: Bool) throws(FetchError) {
        guard let parts = URLComponents(string: text), let scheme = parts.scheme?.lowercased(),
            ["http", "https"].contains(scheme), let host = parts.host, !host.isEmpty
        else {
            throw FetchError(
                code: .misconfigured,
                message: "\(text) is not an https:// URL such as https://railpublickey.uic.org/download.php.",
                details: .init(url: text))
        }
        guard scheme == "https" || allowsPlainHTTP else {
            throw FetchError(
                code: .misconfigured,
                message: "\(text) is plain http://: trust data is fetched over https:// only; use the publisher's "
                    + "https:// URL.",
                details: .init(url: text))
        }
        self.text = text
        isSecure = scheme == "https"
        self.host = host.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        port = parts.port ?? (isSecure ? 443 : 80)
        let path = parts.percentEncodedPath.isEmpty ? "/" : parts.percentEncodedPath
        target = path + (parts.percentEncodedQuery.map { "?" + $0 } ?? "")
    }

    /// `host:port` as a `Host` header and messages write it.
    var authority: String {
        let name = host.contains(":") ? "[\(host)]" : host
        return (isSecure && port == 443) || (!isSecure && port == 80) ? name : "\(name):\(port)"
    }

    /// Where a redirect to `location` (absolute or relative) leads, when that is the same scheme, host and port.
    ///
    /// - Throws: `.redirectToOtherHost` naming both places, or `.badRedirect` for a Location that is no URL.
    func redirect(to location: String?, status: Int) throws(FetchError) -> PublisherURL {
        guard let location, let base = URL(string: text),
            let resolved = URL(string: location, relativeTo: base)?.absoluteString
        else {
            throw FetchError(
                code: .badRedirect,
                message: "\(text) answered \(status) without a usable Location (\(location ?? "none")).",
                details: .init(url: text, status: status))
        }
        // Parsed with plain http allowed: a change of scheme is refused below, with both places named.
        let next: PublisherURL
        do {
            next = try PublisherURL(resolved, allowsPlainHTTP: true)
        } catch {
            throw FetchError(
                code: .badRedirect,
                message: "\(text) answered \(status) with a Location that is no http(s) URL "
                    + "(\(location)).",
                details: .init(url: text, status: status))
        }
        guard next.isSecure == isSecure, next.host == host, next.port == port else {
            let from = (isSecure ? "https://" : "http://") + authority
            let to = (next.isSecure ? "https://" : "http://") + next.authority
            throw FetchError(
                code: .redirectToOtherHost,
                message: "\(text) redirected (\(status)) from \(from) to \(to): trust data is fetched only from the "
                    + "host configured, so the redirect is not followed. If the publisher has moved, configure "
                    + "\(next.text) instead.",
                details: .init(url: text, status: status))
        }
        return next
    }
}
