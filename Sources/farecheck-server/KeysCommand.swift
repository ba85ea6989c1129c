import ArgumentParser
import FareCore
import Foundation
import Signatures
import ValidationAPI
import ValidationServer

/// `keys`: the issuer keys the server publishes to validators in signed bundles.
struct Keys: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Add, remove and list issuer keys; sign and publish them as a key bundle.",
        discussion: """
            Validators see a change of keys only after `keys publish`, which signs a new bundle (sequence one \
            above the last) with the trust anchor's private key.
            """,
        subcommands: [Add.self, Remove.self, List.self, Publish.self]
    )

    /// `keys add PEMFILE`.
    struct Add: StoreCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add (or replace) an issuer key from a certificate or public key file (PEM or DER).")

        @OptionGroup var database: DatabaseOptions

        @Option(help: "The issuer the key signs for (FC1 issuer name, or UIC company code).")
        var issuer: String

        @Option(help: "The key family: fc1, uic (UIC 918.3, UIC 918.9 DOSIPAS and ERA SSB keys) or vdv.")
        var format = "fc1"

        @Option(
            help: """
                The key id as tickets carry it; default: first 8 bytes of SHA-256 over the certificate (DER), \
                or over the public key (SPKI DER), in hex.
                """)
        var kid: String?

        @Option(help: "ES256, EdDSA, PS256 (FC1; default from the key), or the UIC key list's algorithm text.")
        var algorithm: String?

        @Option(
            name: .customLong("not-before"),
            help: "First moment the key may sign (ISO 8601); default: the certificate's.")
        var notBefore: String?

        @Option(
            name: .customLong("not-after"), help: "Last moment the key may sign (ISO 8601); default: the certificate's."
        )
        var notAfter: String?

        @Argument(help: "The certificate or public key file.")
        var file: String

        func run(on store: any ServerStore) async throws {
            let key = try bundleKey()
            try await store.putIssuerKey(key, at: Date())
            say(
                "added \(key.format) key \(key.keyID) of \(key.issuer) (\(key.algorithm ?? "no algorithm")); "
                    + "run `farecheck-server keys publish` to send it to validators")
        }

        func bundleKey() throws(ServerError) -> BundleKey {
            guard let bytes = FileManager.default.contents(atPath: file) else {
                throw ServerError(code: .invalidInput, message: "Cannot read the key file \(file).")
            }
            let material: KeyMaterial
            do {
                material = try KeyMaterial(parsingKeyFile: Array(bytes))
            } catch {
                throw ServerError(code: .invalidInput, message: "\(file): \(error.message)", cause: error)
            }
            let wireFormat = try Self.wireFormat(format)
            let publicKey = material.publicKey
            let keyID: String
            if let kid {
                guard !kid.isEmpty else { throw ServerError(code: .invalidInput, message: "--kid is empty.") }
                keyID = wireFormat == KeyFamily.fc1.wireName ? (kid.lowercased()) : kid
            } else if let certificate = material.certificate {
                keyID = digest(.sha256, certificate.der).prefix(8).hexString
            } else {
                keyID = digest(.sha256, publicKey.spkiDER).prefix(8).hexString
            }
            return BundleKey(
                format: wireFormat, issuer: issuer, keyID: keyID,
                algorithm: algorithm ?? (wireFormat == KeyFamily.fc1.wireName ? Self.fc1Algorithm(of: publicKey.kind) : nil),
                spki: publicKey.spkiDER,
                notBefore: try notBefore.map { text throws(ServerError) in try parseDate(text, option: "--not-before") }
                    ?? material.certificate?.notBefore,
                notAfter: try notAfter.map { text throws(ServerError) in try parseDate(text, option: "--not-after") }
                    ?? material.certificate?.notAfter)
        }

        static func wireFormat(_ name: String) throws(ServerError) -> String {
            guard let family = KeyFamily(name: name) else {
                throw ServerError(code: .invalidInput, message: "--format \(name): expected fc1, uic or vdv.")
            }
            return family.wireName
        }

        static func fc1Algorithm(of kind: KeyKind) -> String? {
            switch kind {
            case .ecP256: "ES256"
            case .ed25519: "EdDSA"
            case .rsa: "PS256"
            default: nil
            }
        }
    }

    /// `keys remove`.
    struct Remove: StoreCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove an issuer key from the next bundle (revoke it too, to stop validators trusting it now).")

        @OptionGroup var database: DatabaseOptions

        @Option(help: "The issuer.")
        var issuer: String

        @Option(help: "fc1, uic or vdv.")
        var format = "fc1"

        @Option(help: "The key id.")
        var kid: String

        func run(on store: any ServerStore) async throws {
            let reference = KeyReference(format: try Add.wireFormat(format), issuer: issuer, keyID: kid)
            guard try await store.removeIssuerKey(reference) else {
                fail("There is no \(reference.format) key \(kid) of \(issuer) (see `farecheck-server keys list`).")
            }
            say("removed \(reference.format) key \(kid) of \(issuer); run `farecheck-server keys publish`")
        }
    }

    /// `keys list`.
    struct List: StoreCommand {
        static let configuration = CommandConfiguration(
            abstract: "List issuer keys, and the sequence of the bundle last published.")

        @OptionGroup var database: DatabaseOptions

        @Flag(help: "One JSON object per line.")
        var json = false

        func run(on store: any ServerStore) async throws {
            for key in try await store.issuerKeys() {
                if json {
                    var object: [String: Any] = [
                        "format": key.format, "issuer": key.issuer, "keyID": key.keyID,
                        "spki": Data(key.spki).base64EncodedString(),
                    ]
                    object["algorithm"] = key.algorithm
                    object["notBefore"] = key.notBefore?.formatted(.iso8601)
                    object["notAfter"] = key.notAfter?.formatted(.iso8601)
                    say(jsonLine(object))
                } else {
                    say("\(key.format)\t\(key.issuer)\t\(key.keyID)\t\(key.algorithm ?? "-")")
                }
            }
            if !json {
                let sequence = try await store.latestBundle()?.sequence
                FileHandle.standardError.write(
                    Data("published bundle: \(sequence.map(String.init) ?? "none")\n".utf8))
            }
        }
    }

    /// `keys publish --anchor-key PATH`.
    struct Publish: StoreCommand {
        static let configuration = CommandConfiguration(
            abstract: "Sign every issuer key into a new key bundle with the trust anchor's key, and publish it.")

        @OptionGroup var database: DatabaseOptions

        @Option(name: .customLong("anchor-key"), help: "The trust anchor's private key (PEM).")
        var anchorKey: String

        @Flag(
            name: .customLong("allow-empty"),
            help: "Publish even with no issuer keys (validators then drop every synced key).")
        var allowEmpty = false

        func run(on store: any ServerStore) async throws {
            let key = try readAnchorKey(anchorKey)
            if try await store.issuerKeys().isEmpty && !allowEmpty {
                fail(
                    "There are no issuer keys: an empty bundle makes validators drop every synced key. Add keys "
                        + "with `farecheck-server keys add`, or pass --allow-empty if that is what you want.")
            }
            let bundle = try await store.publishBundle(signedBy: key)
            say(
                "published key bundle \(bundle.sequence) with \(bundle.keys.count) keys, signed by anchor "
                    + TrustAnchor.id(of: key.publicKey))
        }
    }
}

/// Reads an ISO 8601 date, or a date alone (midnight UTC).
func parseDate(_ text: String, option: String) throws(ServerError) -> Date {
    if let date = try? Date(text, strategy: .iso8601) { return date }
    if let date = try? Date(text + "T00:00:00Z", strategy: .iso8601) { return date }
    throw ServerError(
        code: .invalidInput, message: "\(option) \(text): expected an ISO 8601 date, e.g. 2027-01-01T00:00:00Z.")
}
