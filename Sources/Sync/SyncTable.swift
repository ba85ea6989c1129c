import SyncConfig

// The `[sync]` table of the daemon's configuration is read in `DaemonConfig` (light, fuzzable) into `SyncSettings`;
// this is where it becomes a client, so that `farecheck sync --config` and the daemon's sync worker build the same
// one.

extension SyncSettings {
    /// The TLS files of the table, for `ValidationAPIClient.Configuration`.
    public var tlsFiles: ValidationAPIClient.TLSFiles {
        ValidationAPIClient.TLSFiles(
            caFile: caFile, clientCertificateFile: clientCertificate, clientKeyFile: clientKey)
    }
}

extension ValidationAPIClient.Configuration {
    /// The client a `[sync]` table describes.
    ///
    /// - Parameters:
    ///   - sync: The table.
    ///   - token: The device token it resolved to (`DaemonConfiguration.Sync.resolve(file:)`).
    ///   - requestTimeout: How long each request may take.
    public init(sync: SyncSettings, token: String, requestTimeout: Duration) {
        // A key bundle is at most 8 MiB whatever the table allows; revocations may use all of it.
        self.init(
            baseURL: sync.url, replicas: Array(sync.urls.dropFirst()), token: token, deviceID: sync.deviceID,
            requestTimeout: requestTimeout,
            maximumKeyBundleBytes: min(8 << 20, sync.maximumBodyBytes), maximumRevocationBytes: sync.maximumBodyBytes,
            tls: sync.tlsFiles)
    }
}
