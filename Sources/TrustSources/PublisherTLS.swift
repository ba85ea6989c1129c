import COpenSSL
import Foundation
import NIOCore
import NIOSSL
import Signatures

/// The TLS side of a fetch: the client context of the configured trust, and for `.pinnedSPKI` the pins the handshake's
/// verification callback checks.
struct PublisherTLS: Sendable {
    private let context: NIOSSLContext
    /// The SHA-256 hashes of the pinned SubjectPublicKeyInfos; nil for trust by CA certificates.
    private let pins: Set<[UInt8]>?
    /// What is trusted, as messages name it: "the system's CAs", "the CA file PATH", "the SPKI pins".
    let trusted: String

    /// The context for `trust`; `url` is named in errors.
    ///
    /// - Throws: `.misconfigured` for an unreadable or empty CA file, or a pin that is not a base64 SHA-256 hash.
    init(trust: PublisherTrust, url: String) throws(FetchError) {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.minimumTLSVersion = .tlsv12
        switch trust {
        case .systemCAs:
            pins = nil
            trusted = "the system's CAs"
        case .pinnedCA(let path):
            let roots: [NIOSSLCertificate]
            do {
                roots = try NIOSSLCertificate.fromPEMFile(path)
            } catch {
                throw FetchError(
                    code: .misconfigured,
                    message: "The CA file \(path) pinned for \(url) cannot be read as PEM certificates (\(error)).",
                    details: .init(url: url), cause: error)
            }
            guard !roots.isEmpty else {
                throw FetchError(
                    code: .misconfigured, message: "The CA file \(path) pinned for \(url) holds no PEM certificate.",
                    details: .init(url: url))
            }
            configuration.trustRoots = .certificates(roots)
            pins = nil
            trusted = "the CA file \(path)"
        case .pinnedSPKI(let hashes):
            var decoded: Set<[UInt8]> = []
            for hash in hashes {
                guard let bytes = Data(base64Encoded: hash), bytes.count == 32 else {
                    throw FetchError(
                        code: .misconfigured,
                        message: "The SPKI pin \(hash) for \(url) is not a base64 SHA-256 hash (44 characters, as "
                            + "`openssl dgst -sha256 -binary | base64` prints it).",
                        details: .init(url: url))
                }
                decoded.insert(Array(bytes))
            }
            guard !decoded.isEmpty else {
                throw FetchError(
                    code: .misconfigured, message: "No SPKI pin is given for \(url).", details: .init(url: url))
            }
            pins = decoded
            trusted = decoded.count == 1 ? "the SPKI pin" : "the \(decoded.count) SPKI pins"
        }
        do {
            context = try NIOSSLContext(configuration: configuration)
        } catch {
            throw FetchError(
                code: .misconfigured, message: "The TLS settings for \(url) cannot be used: \(error).",
                details: .init(url: url), cause: error)
        }
    }

    /// The client handler for a connection to `host`: its name is sent (SNI) and checked against the certificate;
    /// an IP address is checked against the certificate only (SNI carries no address).
    func handler(host: String) throws -> NIOSSLClientHandler {
        let isAddress = (try? SocketAddress(ipAddress: host, port: 0)) != nil
        let serverHostname = isAddress ? nil : host
        guard let pins else { return try NIOSSLClientHandler(context: context, serverHostname: serverHostname) }
        // The callback replaces the chain's verification only: NIOSSL still checks the name afterwards.
        return try NIOSSLClientHandler(
            context: context, serverHostname: serverHostname,
            customVerificationCallback: { certificates, promise in
                promise.succeed(Self.verify(certificates, pins: pins) ? .certificateVerified : .failed)
            })
    }

    /// Whether one of `presented` (leaf first) has a pinned key and the leaf's chain verifies up to that certificate
    /// as its trust anchor (dates and the server purpose included).
    ///
    /// The anchor is checked, not merely found: certificates are public, so a server could present a pinned CA's
    /// certificate beside a leaf of its own; only a chain from the leaf (whose key the handshake proves) to the
    /// pinned key shows that the key's holder vouched for this server.
    static func verify(_ presented: [NIOSSLCertificate], pins: Set<[UInt8]>) -> Bool {
        guard !presented.isEmpty else { return false }
        let ders = presented.compactMap { try? $0.toDERBytes() }
        guard ders.count == presented.count else { return false }
        for (index, certificate) in presented.enumerated() {
            guard let spki = try? certificate.extractPublicKey().toSPKIBytes(),
                pins.contains(digest(.sha256, spki))
            else { continue }
            // A pinned leaf is its own anchor: still checked, for its dates and purpose.
            let others = ders.indices.filter { $0 != 0 && $0 != index }.map { ders[$0] }
            if X509Chain.verifies(leaf: ders[0], intermediates: others, anchor: ders[index]) { return true }
        }
        return false
    }
}

/// A certificate chain checked with OpenSSL's verifier (libcrypto), with one certificate as the only trust anchor.
enum X509Chain {
    /// Whether `leaf` (DER) chains to `anchor` through any of `intermediates`, each certificate valid now, the leaf
    /// fit for a TLS server. The anchor need not be self-signed (a partial chain: a pinned intermediate or leaf).
    static func verifies(leaf: [UInt8], intermediates: [[UInt8]], anchor: [UInt8]) -> Bool {
        guard let leafCertificate = certificate(leaf) else { return false }
        defer { X509_free(leafCertificate) }
        guard let anchorCertificate = certificate(anchor) else { return false }
        defer { X509_free(anchorCertificate) }
        let middle = intermediates.compactMap(certificate)
        defer { for certificate in middle { X509_free(certificate) } }
        guard let store = X509_STORE_new() else { return false }
        defer { X509_STORE_free(store) }
        guard X509_STORE_add_cert(store, anchorCertificate) == 1,
            X509_STORE_set_flags(store, UInt(X509_V_FLAG_PARTIAL_CHAIN)) == 1,
            let untrusted = OPENSSL_sk_new_null()
        else { return false }
        defer { OPENSSL_sk_free(untrusted) }
        for certificate in middle where OPENSSL_sk_push(untrusted, UnsafeRawPointer(certificate)) <= 0 {
            return false
        }
        guard let context = X509_STORE_CTX_new() else { return false }
        defer { X509_STORE_CTX_free(context) }
        guard X509_STORE_CTX_init(context, store, leafCertificate, untrusted) == 1,
            X509_STORE_CTX_set_purpose(context, sslServerPurpose) == 1
        else { return false }
        return X509_verify_cert(context) == 1
    }

    /// `X509_PURPOSE_SSL_SERVER`, from openssl/x509v3.h, which COpenSSL's shim does not include.
    private static let sslServerPurpose: Int32 = 2

    /// A certificate parsed from DER, to free with `X509_free`; nil when the bytes are not one.
    private static func certificate(_ der: [UInt8]) -> OpaquePointer? {
        der.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_X509(nil, &cursor, buffer.count)
        }
    }
}
