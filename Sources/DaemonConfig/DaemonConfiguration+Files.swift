import Foundation
import ValidationAPI

// File resolution: the configuration file itself, and the files a `[sync]` table names (the device token, the
// pinned anchors, the TLS files), read or checked once at start so that a missing file is named with its key.

extension DaemonConfiguration {
    /// Reads and checks the file at `path`.
    public static func load(path: String) throws(ConfigurationError) -> DaemonConfiguration {
        guard let data = FileManager.default.contents(atPath: path) else {
            let reason =
                FileManager.default.fileExists(atPath: path)
                ? "cannot be read by this user"
                : "no such file (give --config PATH, or create it from Config/farecheck.toml)"
            throw ConfigurationError(file: path, key: nil, message: reason)
        }
        return try parse(String(decoding: data, as: UTF8.self), file: path)
    }
}

extension DaemonConfiguration.Sync {
    /// Reads the token file and the anchor files.
    ///
    /// - Parameter file: The configuration file, to name in errors.
    public func resolve(file: String) throws(ConfigurationError) -> (token: String, anchors: [TrustAnchor]) {
        var secret = token ?? ""
        if let tokenFile {
            guard let data = FileManager.default.contents(atPath: tokenFile) else {
                throw ConfigurationError(
                    file: file, key: "sync.token_file",
                    message: "cannot read \(tokenFile) (missing, or not "
                        + "readable by this user)")
            }
            secret = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        }
        guard !secret.isEmpty else {
            throw ConfigurationError(file: file, key: "sync.token", message: "the device token is empty")
        }
        var pinned: [TrustAnchor] = []
        for path in anchors {
            if path == Self.demoAnchorName {
                pinned.append(.demo)
                continue
            }
            guard let data = FileManager.default.contents(atPath: path) else {
                throw ConfigurationError(file: file, key: "sync.anchors", message: "cannot read \(path)")
            }
            do {
                pinned.append(try TrustAnchor(pem: String(decoding: data, as: UTF8.self)))
            } catch {
                throw ConfigurationError(file: file, key: "sync.anchors", message: "\(path): \(error.message)")
            }
        }
        if !allowDemoAnchor, pinned.contains(where: { $0.id == TrustAnchor.demo.id }) {
            throw ConfigurationError(
                file: file, key: "sync.anchors",
                message: "pins the DEMO trust anchor (key \(TrustAnchor.demo.id)), whose private key is published "
                    + "in Keys/demo-anchor.key: anyone could sign the key bundles and revocations this validator "
                    + "would accept. Pin the agency's own anchor, or set allow_demo_anchor = true in [sync] on a "
                    + "demo validator only")
        }
        for (key, path) in [
            ("sync.ca_file", caFile), ("sync.client_cert", clientCertificate),
            ("sync.client_key", clientKey),
        ] {
            guard let path else { continue }
            guard FileManager.default.isReadableFile(atPath: path) else {
                throw ConfigurationError(
                    file: file, key: key, message: "cannot read \(path) (missing, or not readable by this user)")
            }
        }
        return (secret, pinned)
    }
}

extension DaemonConfiguration {
    /// What in this configuration weakens the validator without making it unusable, one sentence each: secrets in
    /// files others can read, a page served in clear beyond this machine, PINs hashed without a secret. `farecheck
    /// daemon --check` prints them and the daemon logs them at start.
    ///
    /// - Parameters:
    ///   - file: The configuration file (itself checked: it may hold the device token).
    ///   - environment: Where a systemd credential for the PIN secret is looked up.
    public func securityWarnings(
        file: String?, environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> [String] {
        var warnings: [String] = []
        var secrets: [(what: String, path: String)] = []
        if let file { secrets.append(("the configuration file", file)) }
        if let tokenFile = sync?.tokenFile { secrets.append(("[sync] token_file", tokenFile)) }
        if let key = sync?.clientKey { secrets.append(("[sync] client_key", key)) }
        if let key = http.tlsKey { secrets.append(("[http] tls_key", key)) }
        let secretPath = Self.pinSecretPath(explicit: pinSecretFile, environment: environment)
        if let secretPath { secrets.append(("the PIN secret", secretPath)) }
        for (what, path) in secrets where Self.isWorldReadable(path) {
            warnings.append(
                "\(what) \(path) can be read by every user of this machine: make it readable by the daemon only "
                    + "(chmod 600, or 640 for its group)")
        }
        // The plain listener is what matters: a TLS listener beside it does not stop a client using the plain one.
        if let address = httpAddress, !isLoopback(address.host) {
            let advice =
                http.tlsAddress == nil
                ? "Serve it on loopback and give [http] tls_listen, tls_cert and tls_key for other clients"
                : "[http] tls_listen serves TLS beside it, but this listener does not: put [http] listen on loopback"
            warnings.append(
                "the page listens on \(address.host):\(address.port) without TLS: PINs, session cookies and verdicts "
                    + "cross the network in clear. \(advice)")
        }
        if acceptTestKeys {
            warnings.append(
                "[verification] accept_test_keys is on: tickets signed by issuers' test keys can be valid here; "
                    + "never in service")
        }
        if mode == .inspector, secretPath == nil {
            warnings.append(
                "no PIN secret ([inspector] pin_secret_file, or the systemd credential \(Self.pinSecretCredential)): "
                    + "a copy of the store is enough to search a PIN offline")
        }
        return warnings
    }

    /// Whether others (not owner, not group) may read the file at `path`.
    static func isWorldReadable(_ path: String) -> Bool {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
            let mode = attributes[.posixPermissions] as? NSNumber
        else { return false }
        return mode.intValue & 0o004 != 0
    }
}
