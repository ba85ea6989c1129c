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
