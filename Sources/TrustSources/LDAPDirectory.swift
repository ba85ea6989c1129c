import CLDAP
import Dispatch
import Executors
import FareCore
import Glibc
import Synchronization

/// A certificate directory published over LDAP, such as the VDV-KA's (`ldaps://ldap-vdv-ion.telesec.de:636`, base
/// `ou=VDV KA,o=VDV Kernapplikations GmbH,c=de`): where it is, how its server is trusted, and how long and how much
/// a read of it may take.
///
/// ``read()`` binds anonymously, searches the subtree under the base and returns every entry's name (`cn`) and
/// certificates (`cACertificate`, bytes as published: VDV `7F21` certificates, not X.509).
public struct LDAPDirectory: Sendable {
    /// How the server's TLS certificate is checked on `ldaps://` (always: a certificate that does not check out ends
    /// the read).
    public enum TLSTrust: Sendable, Hashable {
        /// The system's certificate authorities.
        case systemCertificateAuthorities
        /// Only the CA certificates in this PEM file.
        case pinnedCertificateAuthorities(path: String)
    }

    /// How long a read may wait.
    public struct Timeouts: Sendable, Hashable {
        /// For the TCP connection (and, on `ldaps://`, the TLS handshake).
        public var connect: Duration
        /// For the whole read: connection, bind, search and every entry of the answer.
        public var operation: Duration

        /// Waits of at most `connect` for the connection and `operation` for the whole read.
        public init(connect: Duration = .seconds(10), operation: Duration = .seconds(60)) {
            self.connect = connect
            self.operation = operation
        }
    }

    /// How much a read takes in: a directory gone wrong is refused, not buffered.
    public struct Limits: Sendable, Hashable {
        /// The most entries a search may find; more is a `tooManyEntries` error.
        public var entries: Int
        /// The most bytes of one value; a larger one is a problem of its entry.
        public var valueBytes: Int
        /// The most bytes of one message of the answer (an entry with all its values); a larger one ends the read.
        public var entryBytes: Int

        /// The caps. The defaults are generous for the VDV-KA directory (a few hundred certificates of ~330 bytes).
        public init(entries: Int = 10_000, valueBytes: Int = 16 * 1024, entryBytes: Int = 256 * 1024) {
            self.entries = entries
            self.valueBytes = valueBytes
            self.entryBytes = entryBytes
        }
    }

    /// The directory's URL: `ldap://host:port` or `ldaps://host:port`.
    public var url: String
    /// The entry the search starts from, searched with its whole subtree.
    public var baseDN: String
    /// Which entries are certificates (an LDAP filter).
    public var filter: String
    /// The attribute that names an entry's certificate (the CA reference in hex, on the VDV-KA directory).
    public var nameAttribute: String
    /// The attribute that holds the certificates (also accepted with the `;binary` option).
    public var certificateAttribute: String
    /// How the server's certificate is checked.
    public var trust: TLSTrust
    /// How long a read may wait.
    public var timeouts: Timeouts
    /// How much a read takes in.
    public var limits: Limits

    /// Where libldap's blocking calls run: never on a thread of Swift's cooperative pool.
    private let queue: BlockingQueue

    /// A directory at `url` under `baseDN`. Reads run on `queue`, one at a time.
    public init(
        url: String, baseDN: String, filter: String = "(cACertificate=*)", nameAttribute: String = "cn",
        certificateAttribute: String = "cACertificate", trust: TLSTrust = .systemCertificateAuthorities,
        timeouts: Timeouts = Timeouts(), limits: Limits = Limits(),
        queue: BlockingQueue = BlockingQueue(label: "farecheck.ldap")
    ) {
        self.url = url
        self.baseDN = baseDN
        self.filter = filter
        self.nameAttribute = nameAttribute
        self.certificateAttribute = certificateAttribute
        self.trust = trust
        self.timeouts = timeouts
        self.limits = limits
        self.queue = queue
    }

    /// Reads the directory: an anonymous bind and a subtree search, within the timeouts and the caps.
    ///
    /// Entries that are not one name and at least one certificate come back as problems, beside the good ones.
    /// Throws a ``DirectoryError`` when the directory cannot be read as a whole.
    public func read() async throws(DirectoryError) -> DirectoryListing {
        let directory = self
        let result = await queue.run { () -> Result<DirectoryListing, DirectoryError> in
            var session = LDAPSession(directory: directory)
            defer { session.close() }
            do throws(DirectoryError) {
                return .success(try session.read())
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }
}

/// What a read of a directory found: the good entries, and what was wrong with the others.
public struct DirectoryListing: Sendable, Hashable {
    /// The entries with one name and at least one certificate, in the order the server sent them.
    public var entries: [DirectoryEntry]
    /// The entries left out, each with why.
    public var problems: [DirectoryEntryProblem]
}

/// One certificate entry of a directory.
public struct DirectoryEntry: Sendable, Hashable {
    /// The entry's distinguished name.
    public var dn: String
    /// Its name attribute's value (`cn`: on the VDV-KA directory, the certificate's reference in hex).
    public var name: String
    /// Its certificates, bytes as published.
    public var certificates: [[UInt8]]
}

/// An entry of a directory that was left out, and why.
public struct DirectoryEntryProblem: Sendable, Hashable {
    /// What is wrong with an entry.
    public enum Kind: Sendable, Hashable {
        /// It has no name attribute.
        case missingName
        /// It has more than one value of the name attribute.
        case severalNames
        /// Its name is empty or not UTF-8.
        case unreadableName
        /// It has no certificate.
        case missingCertificate
        /// One of its certificate values is empty.
        case emptyCertificate
        /// One of its values is larger than the cap.
        case oversizedValue
    }

    /// The entry's distinguished name.
    public var dn: String
    /// What is wrong with it.
    public var kind: Kind
    /// The same, in a sentence that names the entry.
    public var message: String
}

/// Cuts a session's blocked call short once its time is up, unless the session ended first: `disarm()` and `fire()`
/// exclude each other, so the connection record is never touched after the session let go of its handle.
private final class Watchdog: Sendable {
    private let state: Mutex<Bool>
    private nonisolated(unsafe) let connection: UnsafeMutablePointer<CLDAP_Connection>

    init(_ connection: UnsafeMutablePointer<CLDAP_Connection>) {
        self.connection = connection
        state = Mutex(true)
    }

    func fire() {
        state.withLock { armed in
            if armed { CLDAP_interruptConnection(connection) }
            armed = false
        }
    }

    func disarm() { state.withLock { $0 = false } }
}

/// An entry as read: a good one, or why it is left out.
private enum EntryReading {
    case entry(DirectoryEntry)
    case problem(DirectoryEntryProblem)
}

/// One read of a directory through libldap: a handle from `ldap_initialize`, its options, the bind and the search.
/// Every call blocks: it runs on the directory's queue only.
private struct LDAPSession {
    let directory: LDAPDirectory
    let deadline: ContinuousClock.Instant
    var handle: OpaquePointer?
    /// What the handle's connect callback saw; freed by libldap with the handle.
    var connection: UnsafeMutablePointer<CLDAP_Connection>?

    init(directory: LDAPDirectory) {
        self.directory = directory
        deadline = .now + directory.timeouts.operation
    }

    var url: String { directory.url }

    mutating func close() {
        if let handle { ldap_unbind_ext_s(handle, nil, nil) }
        handle = nil
        connection = nil
    }

    mutating func read() throws(DirectoryError) -> DirectoryListing {
        let handle = try open()
        self.handle = handle
        guard let connection = CLDAP_watchConnections(handle) else { throw optionRefused("the connection watch") }
        self.connection = connection
        // libldap bounds its waits for answers, not its reads of a TLS handshake: past the deadline (and a little
        // grace for its own timeouts to speak first), the watchdog shuts the socket, which ends any blocked call.
        let watchdog = Watchdog(connection)
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Self.milliseconds(of: left) + 500)) {
            watchdog.fire()
        }
        defer { watchdog.disarm() }
        do throws(DirectoryError) {
            try bind(handle)
            return try search(handle)
        } catch  where error.code != .timedOut && CLDAP_connectionInterrupted(connection) != 0 {
            throw timedOut("the directory did not answer", resultCode: error.resultCode, diagnostic: error.diagnostic)
        }
    }

    private var left: Duration { ContinuousClock.now.duration(to: deadline) }

    private static func milliseconds(of duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        return max(Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000), 0)
    }

    /// A handle with every option set; libldap connects on the first operation.
    private func open() throws(DirectoryError) -> OpaquePointer {
        let lowered = url.lowercased()
        guard lowered.hasPrefix("ldap://") || lowered.hasPrefix("ldaps://") else {
            throw DirectoryError(
                code: .misconfigured, url: url, message: "\(url) is not an ldap:// or ldaps:// URL")
        }
        var handle: OpaquePointer?
        let initialized = ldap_initialize(&handle, url)
        guard initialized == LDAP_SUCCESS, let handle else {
            throw DirectoryError(
                code: .misconfigured, url: url, message: "\(url) is not an LDAP URL libldap accepts",
                resultCode: initialized, diagnostic: text(of: initialized))
        }
        do throws(DirectoryError) {
            try configure(handle)
        } catch {
            ldap_unbind_ext_s(handle, nil, nil)
            throw error
        }
        return handle
    }

    private func configure(_ handle: OpaquePointer) throws(DirectoryError) {
        var version: Int32 = LDAP_VERSION3
        try set(handle, LDAP_OPT_PROTOCOL_VERSION, &version, "the protocol version")
        var connect = timeval(min(directory.timeouts.connect, directory.timeouts.operation))
        try set(handle, LDAP_OPT_NETWORK_TIMEOUT, &connect, "the connect timeout")
        try setOperationTimeout(handle)
        guard CLDAP_setReferralsOff(handle) == LDAP_OPT_SUCCESS else { throw optionRefused("referrals off") }
        guard CLDAP_setMaxIncomingBytes(handle, ber_len_t(max(directory.limits.entryBytes, 1024))) == 0 else {
            throw optionRefused("the cap on a message's size")
        }
        var requireCertificate: Int32 = LDAP_OPT_X_TLS_HARD
        try set(handle, LDAP_OPT_X_TLS_REQUIRE_CERT, &requireCertificate, "a certificate required of the server")
        if case .pinnedCertificateAuthorities(let path) = directory.trust {
            guard access(path, R_OK) == 0 else {
                throw DirectoryError(
                    code: .misconfigured, url: url,
                    message: "\(url): the CA file \(path) cannot be read (\(String(cString: strerror(errno))))")
            }
            let stored = path.withCString { ldap_set_option(handle, LDAP_OPT_X_TLS_CACERTFILE, $0) }
            guard stored == LDAP_OPT_SUCCESS else { throw optionRefused("the CA file \(path)") }
        }
        // The TLS settings above take effect in a context of this handle's own (0: a client's), not libldap's
        // global one that other handles of the process share.
        var isServer: Int32 = 0
        guard ldap_set_option(handle, LDAP_OPT_X_TLS_NEWCTX, &isServer) == LDAP_OPT_SUCCESS else {
            throw DirectoryError(
                code: .misconfigured, url: url,
                message: "\(url): libldap could not set up TLS with these settings (is the CA file PEM?)",
                diagnostic: diagnostic(handle))
        }
    }

    /// The time the next blocking call may take: what is left of the whole read.
    private func setOperationTimeout(_ handle: OpaquePointer) throws(DirectoryError) {
        var left = try remaining()
        try set(handle, LDAP_OPT_TIMEOUT, &left, "the operation timeout")
    }

    private func remaining() throws(DirectoryError) -> timeval {
        let left = ContinuousClock.now.duration(to: deadline)
        guard left > .zero else { throw timedOut("the directory took longer than the whole read may") }
        return timeval(left)
    }

    private func set<Value: BitwiseCopyable>(
        _ handle: OpaquePointer, _ option: Int32, _ value: inout Value, _ what: String
    ) throws(DirectoryError) {
        let stored = withUnsafePointer(to: &value) { ldap_set_option(handle, option, $0) }
        guard stored == LDAP_OPT_SUCCESS else { throw optionRefused(what) }
    }

    private func optionRefused(_ what: String) -> DirectoryError {
        DirectoryError(code: .misconfigured, url: url, message: "\(url): libldap refused the setting of \(what)")
    }

    private func bind(_ handle: OpaquePointer) throws(DirectoryError) {
        try setOperationTimeout(handle)
        let result = CLDAP_bindAnonymously(handle)
        guard result != LDAP_SUCCESS else { return }
        let said = diagnostic(handle)
        switch result {
        case LDAP_TIMEOUT:
            throw timedOut("the server did not answer the bind", resultCode: result, diagnostic: said)
        case LDAP_SERVER_DOWN, LDAP_CONNECT_ERROR:
            throw connectionFailure(result, diagnostic: said)
        default:
            throw DirectoryError(
                code: .bindRefused, url: url,
                message: "\(url) refused the anonymous bind (\(text(of: result))\(said.map { ": \($0)" } ?? ""))",
                resultCode: result, diagnostic: said)
        }
    }

    /// What a failed connection was: on `ldaps://` a connection that failed with libldap's TLS words (GnuTLS's or
    /// OpenSSL's) is a TLS failure, else the server was not reached.
    private func connectionFailure(_ result: Int32, diagnostic said: String?) -> DirectoryError {
        let secure = url.lowercased().hasPrefix("ldaps://")
        let detail = said.map { ": \($0)" } ?? ""
        let connected = connection.map { CLDAP_connectionCount($0) > 0 } ?? false
        if secure && (connected || result == LDAP_CONNECT_ERROR || Self.looksLikeTLS(said)) {
            return DirectoryError(
                code: .tlsFailed, url: url,
                message: "\(url): the TLS handshake failed (\(text(of: result))\(detail)); is the server's "
                    + "certificate from the trusted CA and for this host name?",
                resultCode: result, diagnostic: said)
        }
        return DirectoryError(
            code: .unreachable, url: url,
            message: "\(url): could not connect (\(text(of: result))\(detail)); is the address right and the "
                + "server up?",
            resultCode: result, diagnostic: said)
    }

    private static func looksLikeTLS(_ diagnostic: String?) -> Bool {
        guard let diagnostic = diagnostic?.lowercased() else { return false }
        return ["tls", "ssl", "certificate", "handshake"].contains { diagnostic.contains($0) }
    }

    private func search(_ handle: OpaquePointer) throws(DirectoryError) -> DirectoryListing {
        try setOperationTimeout(handle)
        var limit = try remaining()
        var messageID: Int32 = 0
        // One more than the cap: a server that stops there says it had more.
        let sizeLimit = Int32(clamping: directory.limits.entries + 1)
        let attributes: [UnsafeMutablePointer<CChar>?] =
            [strdup(directory.nameAttribute), strdup(directory.certificateAttribute), nil]
        defer { for attribute in attributes { free(attribute) } }
        let started = attributes.withUnsafeBufferPointer { names in
            ldap_search_ext(
                handle, directory.baseDN, CLDAP_scopeSubtree(), directory.filter,
                UnsafeMutablePointer(mutating: names.baseAddress), 0, nil, nil, &limit, sizeLimit, &messageID)
        }
        guard started == LDAP_SUCCESS else { throw searchFailure(handle, started, nil) }
        var listing = DirectoryListing(entries: [], problems: [])
        var found = 0
        while true {
            var wait = try remaining()
            var message: OpaquePointer?
            let kind = ldap_result(handle, messageID, LDAP_MSG_ONE, &wait, &message)
            defer { if let message { ldap_msgfree(message) } }
            if kind == 0 {
                ldap_abandon_ext(handle, messageID, nil, nil)
                throw timedOut("the search's answer did not end in time")
            }
            guard kind > 0, let message else {
                var code: Int32 = LDAP_OTHER
                ldap_get_option(handle, LDAP_OPT_RESULT_CODE, &code)
                if code == LDAP_TIMEOUT { throw timedOut("the search's answer did not end in time") }
                if code == LDAP_SERVER_DOWN || code == LDAP_CONNECT_ERROR {
                    throw connectionFailure(code, diagnostic: diagnostic(handle))
                }
                throw DirectoryError(
                    code: .malformedAnswer, url: url,
                    message: "\(url): the search's answer could not be read (\(text(of: code))); an entry larger "
                        + "than \(directory.limits.entryBytes) bytes is refused",
                    resultCode: code, diagnostic: diagnostic(handle))
            }
            switch CLDAP_searchMessageKind(message) {
            case 1:
                found += 1
                guard found <= directory.limits.entries else {
                    ldap_abandon_ext(handle, messageID, nil, nil)
                    throw tooManyEntries()
                }
                switch entry(handle, message) {
                case .entry(let entry): listing.entries.append(entry)
                case .problem(let problem): listing.problems.append(problem)
                }
            case 2:
                var code: Int32 = LDAP_OTHER
                var said: UnsafeMutablePointer<CChar>?
                let parsed = ldap_parse_result(handle, message, &code, nil, &said, nil, nil, 0)
                let text = said.map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 }
                if let said { ldap_memfree(said) }
                guard parsed == LDAP_SUCCESS else { throw searchFailure(handle, parsed, text) }
                if code == LDAP_SIZELIMIT_EXCEEDED { throw tooManyEntries() }
                guard code == LDAP_SUCCESS else { throw searchFailure(handle, code, text) }
                return listing
            default:
                // A reference to another server (referrals are not chased) or an intermediate message: nothing of
                // this directory's.
                continue
            }
        }
    }

    private func searchFailure(_ handle: OpaquePointer, _ code: Int32, _ said: String?) -> DirectoryError {
        if code == LDAP_TIMEOUT || code == LDAP_TIMELIMIT_EXCEEDED {
            return timedOut("the search did not end in time", resultCode: code, diagnostic: said)
        }
        if code == LDAP_SERVER_DOWN || code == LDAP_CONNECT_ERROR {
            return connectionFailure(code, diagnostic: said ?? diagnostic(handle))
        }
        let hint = code == LDAP_NO_SUCH_OBJECT ? "; is the base DN right?" : ""
        return DirectoryError(
            code: .searchFailed, url: url,
            message: "\(url): the search under \"\(directory.baseDN)\" for \(directory.filter) failed "
                + "(\(text(of: code))\(said.map { ": \($0)" } ?? ""))\(hint)",
            resultCode: code, diagnostic: said)
    }

    private func tooManyEntries() -> DirectoryError {
        DirectoryError(
            code: .tooManyEntries, url: url,
            message: "\(url): the search under \"\(directory.baseDN)\" found more than "
                + "\(directory.limits.entries) entries, the most a read takes; nothing was taken",
            resultCode: LDAP_SIZELIMIT_EXCEEDED)
    }

    private func timedOut(_ what: String, resultCode: Int32? = LDAP_TIMEOUT, diagnostic: String? = nil)
        -> DirectoryError
    {
        DirectoryError(
            code: .timedOut, url: url,
            message: "\(url): \(what) within \(directory.timeouts.operation) (connect \(directory.timeouts.connect))",
            resultCode: resultCode, diagnostic: diagnostic)
    }

    /// One entry as a value, or why it is left out.
    private func entry(_ handle: OpaquePointer, _ message: OpaquePointer) -> EntryReading {
        let dn: String
        if let pointer = ldap_get_dn(handle, message) {
            dn = String(cString: pointer)
            ldap_memfree(pointer)
        } else {
            dn = "(an entry without a readable DN)"
        }
        var names: [[UInt8]] = []
        var certificates: [[UInt8]] = []
        var oversized = false
        var element: OpaquePointer?
        var attribute = ldap_first_attribute(handle, message, &element)
        while let current = attribute {
            // `cACertificate;binary` is `cACertificate` with the transfer option: the same values.
            let base = String(cString: current).split(separator: ";", maxSplits: 1).first.map(String.init) ?? ""
            let isName = base.lowercased() == directory.nameAttribute.lowercased()
            let isCertificate = base.lowercased() == directory.certificateAttribute.lowercased()
            if isName || isCertificate, let values = ldap_get_values_len(handle, message, current) {
                var index = 0
                while let value = values[index] {
                    let count = Int(value.pointee.bv_len)
                    if count > directory.limits.valueBytes {
                        oversized = true
                    } else {
                        let bytes = value.pointee.bv_val.map { pointer in
                            pointer.withMemoryRebound(to: UInt8.self, capacity: count) {
                                Array(UnsafeBufferPointer(start: $0, count: count))
                            }
                        }
                        if isName { names.append(bytes ?? []) } else { certificates.append(bytes ?? []) }
                    }
                    index += 1
                }
                ldap_value_free_len(values)
            }
            ldap_memfree(current)
            attribute = ldap_next_attribute(handle, message, element)
        }
        if let element { ber_free(element, 0) }

        func problem(_ kind: DirectoryEntryProblem.Kind, _ what: String) -> EntryReading {
            .problem(DirectoryEntryProblem(dn: dn, kind: kind, message: "\(url): the entry \"\(dn)\" \(what)"))
        }
        let nameAttribute = directory.nameAttribute
        let certificateAttribute = directory.certificateAttribute
        if oversized {
            return problem(.oversizedValue, "has a value larger than \(directory.limits.valueBytes) bytes; left out")
        }
        guard let nameBytes = names.first else { return problem(.missingName, "has no \(nameAttribute); left out") }
        guard names.count == 1 else {
            return problem(.severalNames, "has \(names.count) values of \(nameAttribute), not one; left out")
        }
        guard !nameBytes.isEmpty, let name = String(validating: nameBytes, as: UTF8.self) else {
            return problem(.unreadableName, "has an empty or non-UTF-8 \(nameAttribute); left out")
        }
        guard !certificates.isEmpty else {
            return problem(.missingCertificate, "has no \(certificateAttribute); left out")
        }
        guard !certificates.contains(where: \.isEmpty) else {
            return problem(.emptyCertificate, "has an empty \(certificateAttribute) value; left out")
        }
        return .entry(DirectoryEntry(dn: dn, name: name, certificates: certificates))
    }

    private func diagnostic(_ handle: OpaquePointer) -> String? {
        var said: UnsafeMutablePointer<CChar>?
        guard ldap_get_option(handle, LDAP_OPT_DIAGNOSTIC_MESSAGE, &said) == LDAP_OPT_SUCCESS, let said else {
            return nil
        }
        defer { ldap_memfree(said) }
        let text = String(cString: said)
        return text.isEmpty ? nil : text
    }

    private func text(of code: Int32) -> String { String(cString: ldap_err2string(code)) }
}

extension timeval {
    /// A `timeval` of `duration`, rounded up to a microsecond (never zero, which libldap reads as "poll").
    fileprivate init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        let microseconds =
            Int(max(seconds, 0)) * 1_000_000
            + Int(max((attoseconds + 999_999_999_999) / 1_000_000_000_000, 0))
        self.init(tv_sec: max(microseconds, 1) / 1_000_000, tv_usec: max(microseconds, 1) % 1_000_000)
    }
}
