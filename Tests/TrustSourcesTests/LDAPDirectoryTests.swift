import Foundation
import TestSupport
import Testing
import TrustSources

/// The certificate directory read through libldap from a real slapd on loopback (``LoopbackSLAPD``), as the
/// reference server will read the VDV-KA's.
@Suite("LDAP certificate directory", .timeLimit(.minutes(1)))
struct LDAPDirectoryTests {
    /// The shipped VDV certificates (kitinerary's files), named by their file names as the directory names them by
    /// their reference.
    static func fixtureCertificates() throws -> [String: [UInt8]] {
        var certificates: [String: [UInt8]] = [:]
        for file in try Fixtures.names(in: "vdv/certs", endingWith: ".vdv-cert") {
            certificates[String(file.dropLast(".vdv-cert".count))] = try Fixtures.bytes("vdv/certs/\(file)")
        }
        return certificates
    }

    static func directory(
        _ url: String, trust: LDAPDirectory.TLSTrust = .systemCertificateAuthorities,
        operation: Duration = .seconds(10), limits: LDAPDirectory.Limits = .init()
    ) -> LDAPDirectory {
        LDAPDirectory(
            url: url, baseDN: LoopbackSLAPD.base, trust: trust,
            timeouts: .init(connect: .seconds(2), operation: operation), limits: limits)
    }

    /// Reads `directory`, expecting it to fail; returns the error and how long the read took.
    static func failure(of directory: LDAPDirectory) async -> (error: DirectoryError?, took: Duration) {
        let started = ContinuousClock.now
        do {
            let listing = try await directory.read()
            Issue.record("the read returned \(listing.entries.count) entries")
            return (nil, started.duration(to: .now))
        } catch {
            return (error, started.duration(to: .now))
        }
    }

    @Test("the shipped VDV certificates come back byte for byte, each under its cn")
    func shippedCertificatesComeBack() async throws {
        let certificates = try Self.fixtureCertificates()
        #expect(certificates.count == 31)
        let server = try LoopbackSLAPD(entries: certificates.map { DirectoryTestEntry.certificate($0.key, $0.value) })
        defer { server.stop() }

        let listing = try await Self.directory(server.url).read()

        #expect(listing.problems == [])
        #expect(listing.entries.count == certificates.count)
        for entry in listing.entries {
            #expect(entry.certificates == [certificates[entry.name] ?? []], "\(entry.name)")
            #expect(entry.dn == "cn=\(entry.name),\(LoopbackSLAPD.base)")
        }
        #expect(Set(listing.entries.map(\.name)) == Set(certificates.keys))
    }

    @Test("over ldaps with the pinned CA, the certificates come back")
    func ldapsWithPinnedCA() async throws {
        let scratch = Workbench()
        let pki = try LoopbackLDAPPKI(in: scratch.directory)
        let certificates = try Self.fixtureCertificates()
        let name = "4555564456100106"
        let server = try LoopbackSLAPD(
            entries: [.certificate(name, certificates[name] ?? [])], tls: pki.server)
        defer { server.stop() }
        #expect(server.url.hasPrefix("ldaps://"))

        let listing = try await Self.directory(
            server.url, trust: .pinnedCertificateAuthorities(path: pki.caCertificate)
        ).read()

        #expect(listing.entries.map(\.name) == [name])
        #expect(listing.entries.first?.certificates == [certificates[name] ?? []])
    }

    @Test("over ldaps, a server whose certificate is from another CA is refused with a TLS error and no entries")
    func ldapsWithStrangerCertificate() async throws {
        let scratch = Workbench()
        let pki = try LoopbackLDAPPKI(in: scratch.directory)
        let server = try LoopbackSLAPD(
            entries: [.certificate("4555564456100106", [0x7F, 0x21, 0x01, 0x00])], tls: pki.strangerServer)
        defer { server.stop() }

        let (error, took) = await Self.failure(
            of: Self.directory(server.url, trust: .pinnedCertificateAuthorities(path: pki.caCertificate)))

        #expect(error?.code == .tlsFailed, "\(String(describing: error))")
        #expect(error?.message.contains(server.url) == true)
        #expect(took < .seconds(5))
    }

    @Test("a port where nothing listens fails at once as unreachable, naming the URL")
    func nothingListens() async throws {
        let url = "ldap://127.0.0.1:\(try LoopbackPort.unused())"

        let (error, took) = await Self.failure(of: Self.directory(url))

        #expect(error?.code == .unreachable, "\(String(describing: error))")
        #expect(error?.message.contains(url) == true)
        #expect(error?.url == url)
        #expect(took < .seconds(3))
    }

    @Test(
        "a server that accepts but never answers fails within the timeout, over ldap and ldaps",
        arguments: ["ldap", "ldaps"])
    func silentServerTimesOut(scheme: String) async throws {
        let silent = try LoopbackPort.listening()
        let url = "\(scheme)://127.0.0.1:\(silent.port)"

        let (error, took) = await Self.failure(of: Self.directory(url, operation: .seconds(1)))

        #expect(error?.code == .timedOut, "\(String(describing: error))")
        #expect(error?.message.contains(url) == true)
        #expect(took < .seconds(4))
        withExtendedLifetime(silent) {}
    }

    @Test("more entries than the cap is an error and nothing is returned; as many as the cap is read")
    func entriesOverTheCap() async throws {
        let server = try LoopbackSLAPD(
            entries: (0..<4).map {
                .certificate(String(format: "44455644561101%02d", $0), [0x7F, 0x21, 0x01, UInt8($0)])
            })
        defer { server.stop() }

        let (error, _) = await Self.failure(of: Self.directory(server.url, limits: .init(entries: 3)))
        #expect(error?.code == .tooManyEntries, "\(String(describing: error))")
        #expect(error?.message.contains("more than 3 entries") == true)

        let listing = try await Self.directory(server.url, limits: .init(entries: 4)).read()
        #expect(listing.entries.count == 4)
    }

    @Test("entries without a certificate, with two cn, or with an oversized value are reported; the others returned")
    func badEntriesAreReported() async throws {
        let good: [UInt8] = [0x7F, 0x21, 0x03, 0x5F, 0x4E, 0x00]
        let server = try LoopbackSLAPD(entries: [
            .certificate("4445564456110111", good),
            .certificate(names: ["4445564456110116"], certificates: []),
            .certificate(names: ["4445564456110121", "4445564456110122"], certificates: [good]),
            .certificate("4445564456110211", [UInt8](repeating: 0x7F, count: 600)),
            .certificate("4445564456110216", good),
        ])
        defer { server.stop() }

        // Every entry, not only those with a certificate (the default filter would not show the one without).
        var directory = Self.directory(server.url, limits: .init(valueBytes: 512))
        directory.filter = "(cn=*)"
        let listing = try await directory.read()

        #expect(listing.entries.map(\.name).sorted() == ["4445564456110111", "4445564456110216"])
        #expect(listing.entries.allSatisfy { $0.certificates == [good] })
        let problems = Dictionary(uniqueKeysWithValues: listing.problems.map { ($0.dn, $0) })
        func problem(_ name: String) -> DirectoryEntryProblem? { problems["cn=\(name),\(LoopbackSLAPD.base)"] }
        #expect(problem("4445564456110116")?.kind == .missingCertificate)
        #expect(problem("4445564456110121")?.kind == .severalNames)
        #expect(problem("4445564456110211")?.kind == .oversizedValue)
        #expect(problem("4445564456110121")?.message.contains("2 values of cn") == true)
        #expect(listing.problems.count == 3)
    }
}
