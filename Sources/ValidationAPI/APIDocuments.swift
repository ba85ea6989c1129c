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

    /// Makes a health report.
    public init(status: String, storage: String, keyBundleSequence: Int64?) {
        self.status = status
        self.storage = storage
        self.keyBundleSequence = keyBundleSequence
    }
}
