import Foundation

/// The paths of the API, as `API/openapi.yaml` lists them.
public enum APIPath {
    /// `GET`: the signed key bundle.
    public static let keys = "/v1/keys"
    /// `GET ?cursor=N`: the signed revocation delta since a cursor.
    public static let revocations = "/v1/revocations"
    /// `POST`: a batch of inspection records.
    public static let inspections = "/v1/inspections"
    /// `POST`: online validation of one ticket.
    public static let check = "/v1/check"
    /// `GET ?since=MS`: the signed page of the fleet's first uses of single-use tickets recorded since a moment.
    public static let firstUses = "/v1/first-uses"
    /// `GET`, no authentication: whether the server is up.
    public static let health = "/v1/health"
    /// `GET`, no authentication: the server's state for Prometheus (the trust sources it follows).
    public static let metrics = "/metrics"
}

/// The body of every error response: `{ "error": "<code>", "message": "..." }`.
public struct ErrorBody: Sendable, Equatable, Codable {
    /// A stable code, e.g. `unauthorized`, `body-too-large`, `bad-request`.
    public var error: String
    /// A sentence a person can act on.
    public var message: String

    /// Makes an error body.
    public init(error: String, message: String) {
        self.error = error
        self.message = message
    }
}

/// The body of `GET /v1/health`.
public struct HealthStatus: Sendable, Equatable, Codable {
    /// `ok` when the server can reach its database, else `degraded`.
    public var status: String
    /// The storage backend: `sqlite` or `postgresql`.
    public var storage: String
    /// The sequence of the key bundle the server publishes, if any.
    public var keyBundleSequence: Int64?
    /// The publishers the server follows (`[[trust.source]]`), when it follows any: `status` is `degraded` while one
    /// is stale. Absent from servers that follow none, and from those that predate them.
    public var trustSources: [TrustSourceHealth]?

    /// Makes a health report.
    public init(
        status: String, storage: String, keyBundleSequence: Int64?, trustSources: [TrustSourceHealth]? = nil
    ) {
        self.status = status
        self.storage = storage
        self.keyBundleSequence = keyBundleSequence
        self.trustSources = trustSources
    }
}

/// One followed publisher in `GET /v1/health`: whether its trust data is current. Why a fetch failed is not said
/// here (the endpoint needs no token): `farecheck-server trust status` and the operator report say it.
public struct TrustSourceHealth: Sendable, Equatable, Codable {
    /// The source's name, as configured.
    public var name: String
    /// What it publishes (`uic-keylist`, `vdv-ldap`, `vdv-blocklist`, `dtvg-blocklist`, `rsp6-keylist`).
    public var kind: String
    /// The version held, when one is.
    public var version: String?
    /// When a fetch last left the trust current.
    public var lastSuccess: Date?
    /// Seconds since `lastSuccess`.
    public var ageSeconds: Int64?
    /// Whether it is past its configured age (`stale_after`), or has never succeeded since it was first tried.
    public var stale: Bool

    public init(
        name: String, kind: String, version: String?, lastSuccess: Date?, ageSeconds: Int64?, stale: Bool
    ) {
        self.name = name
        self.kind = kind
        self.version = version
        self.lastSuccess = lastSuccess
        self.ageSeconds = ageSeconds
        self.stale = stale
    }
}
