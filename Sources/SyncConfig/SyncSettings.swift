// The validator's side of sync, configured: what a `[sync]` table of the daemon's configuration holds. Light (no
// dependency), so that DaemonConfig reads it into this type and Sync builds its API client from it without either
// module importing the other.

/// Sync with the online validation API (`[sync]`): keys, revocations, inspection upload, online checks.
public struct SyncSettings: Sendable, Equatable {
    /// The API's base URLs, e.g. `https://validation.example.org` (`url`), or several replicas of it on one
    /// database (`urls`), failed over to in this order.
    public var urls: [String]
    /// The first server's base URL; setting it makes it the only server.
    public var url: String {
        get { urls.first ?? "" }
        set { urls = [newValue] }
    }
    /// This validator's device id as registered on the server (for logs).
    public var deviceID: String?
    /// The device token, given inline (`token`) …
    public var token: String?
    /// … or in a file readable only by the daemon (`token_file`), read at start.
    public var tokenFile: String?
    /// PEM files of the trust anchors pinned; `"demo"` pins the embedded demo anchor (demo validators only).
    public var anchors: [String]
    /// Whether the demo anchor may be pinned (`allow_demo_anchor`): its private key is published, so a
    /// validator that pins it trusts key bundles anyone can sign. Off unless a demo says so.
    public var allowDemoAnchor: Bool = false
    /// Seconds between two sync rounds (each ±10 %).
    public var interval: Double = 300
    /// Ask the server about each ticket the offline check finds valid, while connected.
    public var onlineCheck: Bool = false
    /// Milliseconds an online check may take before the offline verdict is shown.
    public var onlineDeadlineMilliseconds: Int = 800
    /// Seconds after the last good sync past which verdicts carry the warning `stale-trust-data`.
    public var staleAfter: Double = 86400
    /// Days the journal keeps an inspection the server acknowledged (`journal_keep_days`); 0 keeps every one.
    /// Inspections waiting for the server, and those it refused, are always kept.
    public var journalKeepDays: Int = 90
    /// The largest response body accepted (revocations; key bundles at most 8 MiB of it).
    public var maximumBodyBytes: Int = 64 << 20
    /// Seconds each sync request may take.
    public var requestTimeout: Double = 30
    /// A PEM bundle of the CAs trusted for the server's certificate (`ca_file`); nil trusts the system's store.
    public var caFile: String? = nil
    /// The client certificate (PEM) presented for mutual TLS (`client_cert`); set together with `clientKey`.
    public var clientCertificate: String? = nil
    /// The client certificate's private key (PEM, `client_key`).
    public var clientKey: String? = nil

    public init(url: String, token: String? = nil, tokenFile: String? = nil, anchors: [String]) {
        self.urls = [url]
        self.token = token
        self.tokenFile = tokenFile
        self.anchors = anchors
    }

    /// The pinned-anchor value that stands for the embedded demo anchor.
    public static let demoAnchorName = "demo"
}
