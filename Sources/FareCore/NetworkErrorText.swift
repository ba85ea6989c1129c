import Glibc

/// What a failed socket call means to the person who configured it, in one line: what happened, to which address,
/// and what to do. Both programs and the sync client say it the same way (issue 52: never `bind(descriptor:ptr:
/// bytes:): Address already in use) (errno: 98)`).
public enum NetworkErrorText {
    /// Listening on `address` (`host:port`) failed with `code` (an `errno`); `setting` names where the address was
    /// given (`[http] listen`, `--listen`), when there is such a place.
    public static func listening(on address: String, errno code: Int32, setting: String? = nil) -> String {
        let change = setting.map { "change \($0)" } ?? "choose another port"
        return switch code {
        case EADDRINUSE:
            "cannot listen on \(address): another program already listens there (`ss -ltnp` names it); stop it "
                + "or \(change)"
        case EACCES:
            "cannot listen on \(address): permission denied (a port below 1024 needs root or "
                + "CAP_NET_BIND_SERVICE); \(change) to a port from 1024 up"
        case EADDRNOTAVAIL:
            "cannot listen on \(address): no network interface of this machine has that address; use one of its "
                + "own, 127.0.0.1 or 0.0.0.0"
        default:
            "cannot listen on \(address): \(systemReason(code))"
        }
    }

    /// Connecting to `target` (a URL, or `host:port`; nil when the sentence names it already) failed with `code`
    /// (an `errno`).
    public static func connecting(to target: String? = nil, errno code: Int32) -> String {
        let by = target.map { " by \($0)" } ?? ""
        let to = target.map { " to \($0)" } ?? ""
        let server = target ?? "the server"
        return switch code {
        case ECONNREFUSED:
            "connection refused\(by): nothing listens there (is the server running, and are the host and port right?)"
        case ECONNRESET, EPIPE:
            "\(server) closed the connection before answering (a server restarting, or a proxy in between)"
        case ENETUNREACH, EHOSTUNREACH, ENETDOWN:
            "no route\(to) (is this machine's network up?)"
        case ETIMEDOUT:
            "\(server) did not accept the connection in time (the host is down, or a firewall drops the connection)"
        case EACCES, EPERM:
            "connecting\(to) is not permitted here (a firewall rule, or the service's address filter)"
        default:
            "cannot connect\(to): \(systemReason(code))"
        }
    }

    /// The host name `host` could not be resolved.
    public static func unknownHost(_ host: String) -> String {
        "the host name \(host) is not known (check the URL, and this machine's DNS)"
    }

    /// The system's text for an `errno`, lower-cased as part of a sentence (`permission denied`).
    public static func systemReason(_ code: Int32) -> String {
        guard let text = strerror(code) else { return "error \(code)" }
        let reason = String(cString: text)
        return reason.prefix(1).lowercased() + reason.dropFirst()
    }
}
