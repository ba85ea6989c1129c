import Executors
import FareCore
import Foundation
import TrustSources
import ValidationServer

/// What a fetch brought: new content, or nothing new and why.
struct FetchedTrust: Sendable {
    /// The content with its validators, when there is something new to check.
    struct Content: Sendable {
        var bytes: [UInt8]
        var etag: String?
        var lastModified: String?
    }

    var content: Content?
    /// The version the version file states (blocklists with one), as its text.
    var version: String?
    /// Why there is nothing new (when `content` is nil).
    var why: String
}

/// The fetch step of a round: the version file first where there is one, else a conditional request; the LDAP
/// directory for VDV certificates.
struct TrustSourceFetch: Sendable {
    let source: TrustSourceConfiguration

    /// One queue for every LDAP read of the process: libldap's calls block, and one read at a time is plenty.
    private static let ldapQueue = BlockingQueue(label: "farecheck.trust-ldap")

    func fetch(held: TrustSourceState) async throws -> FetchedTrust {
        if source.kind == .vdvLDAP { return try await readDirectory() }
        let fetcher = PublisherFetcher(trust: source.trust, allowsPlainHTTP: source.allowPlainHTTP)
        let limits = FetchLimits(
            maximumBodyBytes: source.maximumBytes, headTimeout: source.headTimeout, bodyTimeout: source.bodyTimeout)
        var version: String?
        var validators = HeldValidators(etag: held.etag, lastModified: held.lastModified)
        if let versionURL = source.versionURL {
            let text = try await fetcher.fetchVersionFile(
                versionURL, headTimeout: source.headTimeout, bodyTimeout: source.bodyTimeout)
            version = text
            if let list = source.kind.blocklist, let held = held.version, held == Self.versionText(text, list),
                held.isEmpty == false
            {
                return FetchedTrust(content: nil, version: version, why: "version \(held) is held already")
            }
            // The version file moved: the list is fetched whole, whatever its validators say.
            validators = HeldValidators()
        }
        switch try await fetcher.fetch(source.url, held: validators, limits: limits) {
        case .notModified:
            return FetchedTrust(content: nil, version: version, why: "not modified since the copy held (304)")
        case .fetched(let body, let etag, let lastModified, _):
            return FetchedTrust(
                content: FetchedTrust.Content(bytes: body, etag: etag, lastModified: lastModified), version: version,
                why: "")
        }
    }

    /// The version file's text as the store writes the list's version (`2025-06-01T03:00:00Z`, `42`); nil when
    /// it does not parse (the round then fails on it when the list is checked).
    static func versionText(_ text: String, _ list: BlocklistKind) -> String? {
        (try? BlocklistVersion(parsing: text, for: list))?.text
    }

    /// The VDV certificates in the directory, as one document: `cn` and the certificate in hex, a line each, sorted,
    /// so that the same directory gives the same bytes (and digest) whatever order it answers in.
    private func readDirectory() async throws -> FetchedTrust {
        let trust: LDAPDirectory.TLSTrust =
            switch source.trust {
            case .pinnedCA(let path): .pinnedCertificateAuthorities(path: path)
            case .systemCAs, .pinnedSPKI: .systemCertificateAuthorities
            }
        let directory = LDAPDirectory(
            url: source.url, baseDN: source.ldapBase, trust: trust,
            timeouts: LDAPDirectory.Timeouts(connect: source.headTimeout, operation: source.bodyTimeout),
            queue: Self.ldapQueue)
        let listing = try await directory.read()
        var lines: [String] = []
        for entry in listing.entries {
            for certificate in entry.certificates { lines.append("\(entry.name) \(certificate.hexString)") }
        }
        lines.sort()
        let document = Array(lines.joined(separator: "\n").utf8)
        guard document.count <= source.maximumBytes else {
            throw FetchError(
                code: .tooLarge,
                message: "The directory \(source.url) answered \(document.count) bytes of certificates, more than the "
                    + "\(source.maximumBytes) allowed",
                details: FetchFailure.Details(url: source.url))
        }
        return FetchedTrust(content: FetchedTrust.Content(bytes: document), version: nil, why: "")
    }
}

extension TrustSourceKind {
    /// The blocklist this kind publishes, if it publishes one.
    var blocklist: BlocklistKind? {
        switch self {
        case .vdvBlocklist: .vdvKA
        case .dtvgBlocklist: .dtvgUIC
        case .uicKeyList, .vdvLDAP, .rsp6KeyList: nil
        }
    }
}
