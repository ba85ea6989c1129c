import Foundation
import TrustSources

/// What a publisher publishes, and so how farecheck fetches, checks and applies it.
public enum TrustSourceKind: String, Sendable, Hashable, CaseIterable, Codable {
    /// The UIC public key list (the XML of `railpublickey.uic.org`): the server's UIC keys follow it.
    case uicKeyList = "uic-keylist"
    /// The VDV-KA certificate directory (LDAP, `cACertificate`): the server's VDV sub-CA certificates follow it,
    /// each only if it chains to a VDV root the server pins.
    case vdvLDAP = "vdv-ldap"
    /// The VDV-KA blocklist: an SQLite file, with `version.txt` (an ISO 8601 time) beside it.
    case vdvBlocklist = "vdv-blocklist"
    /// The DTVG UIC blocklist: `blacklistuic.zip`, with `versionuic.txt` (`{"blacklistId": N}`) beside it.
    case dtvgBlocklist = "dtvg-blocklist"
    /// The UK RSP6 key list (JSON): the server's RSP6 keys of the issuers it names follow it.
    case rsp6KeyList = "rsp6-keylist"

    /// Whether the source publishes keys (held for an operator when too many would go) or a blocklist (held when
    /// its version goes back or it shrinks too much).
    public var publishesKeys: Bool {
        switch self {
        case .uicKeyList, .vdvLDAP, .rsp6KeyList: true
        case .vdvBlocklist, .dtvgBlocklist: false
        }
    }

    /// How often a source of this kind is fetched when its entry names no period: key lists and certificates
    /// change every few weeks, the Deutschland-Ticket blocklists daily.
    public var defaultPeriod: Duration {
        publishesKeys ? .seconds(86_400) : .seconds(3_600)
    }
}

/// One publisher farecheck follows: a `[[trust.source]]` entry of the configuration.
public struct TrustSourceConfiguration: Sendable, Hashable {
    /// The source's name, as status, audit lines and `trust fetch SOURCE` say it: 1 to 64 of `a-z`, `0-9`, `-`.
    public var name: String
    /// What it publishes.
    public var kind: TrustSourceKind
    /// Where: an `https://` URL (`http://` only with `allowPlainHTTP`), or for `vdv-ldap` an `ldaps://` URL
    /// (`ldap://` only with `allowPlainHTTP`).
    public var url: String
    /// The version file beside a blocklist (`version.txt`, `versionuic.txt`), fetched first: the list itself is
    /// fetched only when the version differs from the one held. `nil`: the list's own ETag or Last-Modified
    /// decides.
    public var versionURL: String?
    /// For `vdv-ldap`: the base DN searched (subtree). Default: the production directory's
    /// `ou=VDV KA,o=VDV Kernapplikations GmbH,c=de`.
    public var ldapBase: String
    /// How often the source is fetched; each wait is this plus or minus `jitter` of it, so that servers started
    /// together do not all fetch at once. At least 60 s.
    public var period: Duration
    /// The share of `period` by which each wait varies at random, 0 to 0.5.
    public var jitter: Double
    /// How the publisher's TLS certificate is trusted (HTTPS and LDAPS alike; an SPKI pin only for HTTPS).
    public var trust: PublisherTrust
    /// The largest file (or LDAP answer) accepted.
    public var maximumBytes: Int
    /// From the request's start to the response head (HTTPS), or to the connection (LDAP).
    public var headTimeout: Duration
    /// From the head to the body's last byte (HTTPS), or for the whole search (LDAP).
    public var bodyTimeout: Duration
    /// Key sources: a change that would remove more than this share of the keys the source brought (0 to 1) is
    /// held for an operator.
    public var maximumDropShare: Double
    /// Key sources: a change that would remove a key a ticket verified with in the last this many days (by the
    /// inspections validators uploaded) is held for an operator. 0: no such check.
    public var protectKeysUsedWithinDays: Int
    /// Blocklists: a new version with fewer than this share of the entries held (0 to 1) is held for an operator.
    public var minimumKeptShare: Double
    /// Past this time since the last success the source is stale: `/healthz` says degraded, the report shows the
    /// age in red. Default: three periods.
    public var staleAfter: Duration
    /// Whether `http://` and `ldap://` are accepted (a test bench, a publisher on the same host): never for a
    /// publisher across a network.
    public var allowPlainHTTP: Bool

    /// The production VDV-KA directory's base.
    public static let vdvProductionBase = "ou=VDV KA,o=VDV Kernapplikations GmbH,c=de"

    /// A source with the defaults for its kind.
    public init(
        name: String, kind: TrustSourceKind, url: String, versionURL: String? = nil, ldapBase: String? = nil,
        period: Duration? = nil, jitter: Double = 0.1, trust: PublisherTrust = .systemCAs,
        maximumBytes: Int = 256 << 20, headTimeout: Duration = .seconds(30), bodyTimeout: Duration = .seconds(300),
        maximumDropShare: Double = 0.2, protectKeysUsedWithinDays: Int = 30, minimumKeptShare: Double = 0.5,
        staleAfter: Duration? = nil, allowPlainHTTP: Bool = false
    ) {
        self.name = name
        self.kind = kind
        self.url = url
        self.versionURL = versionURL
        self.ldapBase = ldapBase ?? Self.vdvProductionBase
        let period = period ?? kind.defaultPeriod
        self.period = period
        self.jitter = jitter
        self.trust = trust
        self.maximumBytes = maximumBytes
        self.headTimeout = headTimeout
        self.bodyTimeout = bodyTimeout
        self.maximumDropShare = maximumDropShare
        self.protectKeysUsedWithinDays = protectKeysUsedWithinDays
        self.minimumKeptShare = minimumKeptShare
        self.staleAfter = staleAfter ?? period * 3
        self.allowPlainHTTP = allowPlainHTTP
    }
}

/// Every publisher the server follows (the `[[trust.source]]` entries), in the order written.
public struct TrustFollowingConfiguration: Sendable, Hashable {
    /// The sources; names are unique.
    public var sources: [TrustSourceConfiguration]

    public init(sources: [TrustSourceConfiguration] = []) {
        self.sources = sources
    }

    /// The source named `name`, if there is one.
    public func source(named name: String) -> TrustSourceConfiguration? { sources.first { $0.name == name } }
}
