import FareCore
import Foundation
import RSATestKeys
import Signatures
import TestSupport
import Testing
import TicketFormats

@testable import Verification

/// The VRR sample and the shipped certificates (the fixture tree's `vdv`, copied from shared/fixtures/formats/vdv).
enum VDVFixtures {
    static func bytes(_ path: String) throws -> [UInt8] { try Fixtures.bytes("vdv/\(path)") }

    static func ticket() throws -> [UInt8] { try bytes("vrr-deutschlandticket-2023-03.bin") }

    /// The shipped certificates as an inspector would import them: the root pinned from its body, every
    /// sub-CA body trusted unsigned (the files were recovered with the root when they were made).
    static func authorities() throws -> VDVCertificateSet {
        let names = try Fixtures.names(in: "vdv/certs", endingWith: ".vdv-cert")
        let root = try VDVCertificateImport.root(try bytes("certs/4555564456100106.vdv-cert"))
        var set = VDVCertificateSet([root])
        for name in names where name != "4555564456100106.vdv-cert" {
            set.add(try VDVCertificateImport.subCA(try bytes("certs/\(name)"), root: root, trustUnsigned: true))
        }
        return set
    }
}

@Suite("VDV-KA verification")
struct VDVVerifierTests {
    static let pki = VDVTestPKI.shared

    func verifier(_ certificates: any VDVCertificateSource, trust: TrustSnapshot = TrustSnapshot(), at instant: Date)
        -> TicketVerifier
    {
        TicketVerifier(trust: trust, clock: FixedClock(instant), vdvCertificates: certificates)
    }

    func verify(_ payload: [UInt8], at instant: Date = VDVTestPKI.inspection) throws -> Verdict {
        try verifier(try Self.pki.authorities(), at: instant).verify(payload)
    }

    @Test("the VRR Deutschland-Ticket: valid in March 2023, expired after, not yet valid before")
    func vrrSample() throws {
        let authorities = try VDVFixtures.authorities()
        // 31 files, two of them the same certificate (DEVDV 11 05 16): 30 authorities by CHR.
        #expect(authorities.count == 30)
        #expect(authorities.authority(VDVCAReference(hex: "4445564456110416")!) == nil)
        let payload = try VDVFixtures.ticket()

        let valid = try verifier(authorities, at: utc("2023-03-15T12:00:00Z")).verify(payload)
        #expect(valid.kind == .valid, "\(valid.reason)")
        #expect(valid.signature == .valid)
        #expect(valid.format == .vdvKA)
        #expect(valid.issuer == "57")
        let ticket = try #require(valid.ticket)
        #expect(ticket.product == "Deutschland-Ticket")
        #expect(ticket.holder == "Max Mustermann, born 31.12.1984")
        #expect(ticket.details.first { $0.label == "entitlement number" }?.value == "2099643")
        #expect(ticket.validFrom == utc("2023-02-28T23:00:00Z"))
        #expect(ticket.validUntil == utc("2023-03-31T21:59:58Z"))

        let expired = try verifier(authorities, at: utc("2023-04-02T08:00:00Z")).verify(payload)
        #expect(expired.kind == .expired)
        #expect(expired.signature == .valid)
        let early = try verifier(authorities, at: utc("2023-02-27T08:00:00Z")).verify(payload)
        #expect(early.kind == .notYetValid)
        // The issuer certificate ended on 2023-10-11: a genuine signature with an expired key.
        let late = try verifier(authorities, at: utc("2023-10-12T08:00:00Z")).verify(payload)
        #expect(late.kind == .keyExpired)
        #expect(late.signature == .valid)
        #expect(late.reason.contains("2023"))
    }

    @Test("without VDV certificates, or without the CA the barcode names, the key is unknown")
    func unknownKeys() throws {
        let payload = try VDVFixtures.ticket()
        let none = try TicketVerifier(trust: TrustSnapshot(), clock: FixedClock(utc("2023-03-15T12:00:00Z")))
            .verify(payload)
        #expect(none.kind == .unknownKey)
        #expect(none.format == .vdvKA)
        let onlyRoot = VDVCertificateSet([
            try VDVCertificateImport.root(try VDVFixtures.bytes("certs/4555564456100106.vdv-cert"))
        ])
        let verdict = try verifier(onlyRoot, at: utc("2023-03-15T12:00:00Z")).verify(payload)
        #expect(verdict.kind == .unknownKey)
        #expect(verdict.signature == .unknownKey)
        #expect(verdict.reason.contains("DEVDV 11 02 16"))
        // The key the inspector is told of is the CA the barcode names, as the verdict's key id.
        #expect(
            verdict.keyID == KeyID(VDVCAReference(hex: "4445564456110216")?.hex ?? ""),
            "\(verdict.keyID.map(\.rawValue) ?? "none")")

        let unknown = try verify(Self.pki.barcode(caReference: VDVCAReference(hex: "4445564456119921")!))
        #expect(unknown.kind == .unknownKey)
    }

    @Test("a ticket of the test PKI verifies; its fields come through")
    func testPKITicket() throws {
        let verdict = try verify(Self.pki.barcode())
        #expect(verdict.kind == .valid, "\(verdict.reason)")
        let ticket = try #require(verdict.ticket)
        #expect(ticket.issuer == "4711")
        #expect(ticket.ticketID == [0x00, 0x01, 0xE2, 0x40])
        #expect(ticket.holder == "Erika Musterfrau, born 01.01.1990")
        #expect(ticket.category == "adult")
        #expect(ticket.details.contains { $0.label == "class" && $0.value == "second" })
        #expect(ticket.details.contains { $0.label == "price" && $0.value == "49.00 EUR" })
        #expect(verdict.keyID?.rawValue == VDVWriter.samHolder(organisation: 4_711, samID: 0x01_23_45).hexString)
    }

    @Test("a tampered ticket byte, in the signature or in the clear remainder, is an invalid signature")
    func tamperedTicket() throws {
        let payload = Self.pki.barcode()
        // The remainder (9A) is 5 bytes here: 111 bytes of ticket data, 106 inside the signature.
        for offset in [3, 60, 130, 133, 137] {
            var tampered = payload
            tampered[offset] ^= 0x01
            let verdict = try verify(tampered)
            #expect(verdict.kind == .invalidSignature, "byte \(offset): \(verdict.reason)")
            #expect(verdict.signature == .invalid)
            #expect(verdict.ticket == nil)
        }
    }

    @Test("a tampered certificate byte is an invalid signature")
    func tamperedCertificate() throws {
        let payload = Self.pki.barcode()
        let barcode = try VDVBarcode(parsing: payload)
        let certificateStart = payload.count - 10 - barcode.certificateBytes.count
        // Inside 5F37 (after the 4-byte 7F21 header and the 4-byte 5F37 header) and the 5F38 content.
        for offset in [
            certificateStart + 8, certificateStart + 100, certificateStart + barcode.certificateBytes.count - 1,
        ] {
            var tampered = payload
            tampered[offset] ^= 0x80
            let verdict = try verify(tampered)
            #expect(verdict.kind == .invalidSignature, "byte \(offset): \(verdict.reason)")
        }
    }

    @Test("a certificate signed by another CA than the barcode names is an invalid signature")
    func certificateOfAnotherCA() throws {
        // Signed by the other sub-CA's key (and naming it), but the barcode's 42 names the first sub-CA.
        let foreign = Self.pki.issuerCertificate(signer: Self.pki.otherSubCA, authority: Self.pki.otherSubCAReference)
        let verdict = try verify(Self.pki.barcode(certificate: foreign, caReference: Self.pki.subCAReference))
        #expect(verdict.kind == .invalidSignature)
        // Signed by the named sub-CA but claiming another one inside: the chain link does not hold.
        let mislabelled = Self.pki.issuerCertificate(signer: Self.pki.subCA, authority: Self.pki.otherSubCAReference)
        let second = try verify(Self.pki.barcode(certificate: mislabelled, caReference: Self.pki.subCAReference))
        #expect(second.kind == .invalidSignature)
        #expect(second.reason.contains("names"))
        // Consistent throughout with the other sub-CA: valid.
        let consistent = try verify(Self.pki.barcode(certificate: foreign, caReference: Self.pki.otherSubCAReference))
        #expect(consistent.kind == .valid, "\(consistent.reason)")
    }

    @Test("an expired issuer certificate or sub-CA gives key-expired, with the signature valid")
    func expiredCertificates() throws {
        let expiredIssuer = Self.pki.issuerCertificate(expiry: (2030, 5, 31))
        let verdict = try verify(Self.pki.barcode(certificate: expiredIssuer))
        #expect(verdict.kind == .keyExpired)
        #expect(verdict.signature == .valid)
        #expect(verdict.ticket != nil)
        // The end date is inclusive, to the end of that day in Berlin.
        let lastDay = Self.pki.issuerCertificate(expiry: (2030, 6, 15))
        #expect(try verify(Self.pki.barcode(certificate: lastDay)).kind == .valid)

        let underExpiredSubCA = Self.pki.issuerCertificate(authority: Self.pki.expiredSubCAReference)
        let subCAVerdict = try verify(
            Self.pki.barcode(certificate: underExpiredSubCA, caReference: Self.pki.expiredSubCAReference))
        #expect(subCAVerdict.kind == .keyExpired)
        #expect(subCAVerdict.reason.contains("DEVDV 11 44 19"))
    }

    @Test("truncated or overrunning TLVs are malformed, never a crash")
    func malformedBarcodes() throws {
        let payload = Self.pki.barcode()
        let verifier = self.verifier(try Self.pki.authorities(), at: VDVTestPKI.inspection)
        for count in [1, 2, 3, 100, 131, 133, 150, payload.count - 11, payload.count - 1] {
            let verdict = try verifier.verify(Array(payload.prefix(count)))
            #expect(verdict.kind == .malformed, "\(count) bytes: \(verdict.reason)")
        }
        var overrun = payload
        overrun[2] = 0xFF  // 9E 81 FF: 255 bytes claimed
        let verdict = try verifier.verify(overrun)
        #expect(verdict.kind == .malformed)
        #expect(verdict.reason.contains("byte"))
        var longCertificate = payload
        longCertificate[payload.count - 10 - (try VDVBarcode(parsing: payload)).certificateBytes.count + 3] = 0xF0
        #expect(try verifier.verify(longCertificate).kind == .malformed)
        // Every single-byte corruption gives some verdict.
        for offset in stride(from: 0, to: payload.count, by: 7) {
            var corrupted = payload
            corrupted[offset] ^= 0x5A
            #expect(try verifier.verify(corrupted).kind != .valid)
        }
    }

    @Test("a revoked entitlement is revoked, by KVP organisation and entitlement number")
    func revocation() throws {
        var trust = TrustSnapshot()
        trust.revokeTicket([0x00, 0x01, 0xE2, 0x40], issuer: "4711", Revocation(reason: "reported stolen"))
        let verdict = try verifier(try Self.pki.authorities(), trust: trust, at: VDVTestPKI.inspection)
            .verify(Self.pki.barcode())
        #expect(verdict.kind == .revoked)
        #expect(verdict.reason.contains("reported stolen"))
    }

    @Test("a warm verifier recovers the issuer certificate once, then only the ticket")
    func cache() throws {
        let verifier = self.verifier(try Self.pki.authorities(), at: VDVTestPKI.inspection)
        let cache = try #require(verifier.vdvCertificateCache)
        let payload = Self.pki.barcode()
        #expect(try verifier.verify(payload).kind == .valid)
        #expect(cache.statistics.recoveries == 1)
        #expect(cache.statistics.hits == 0)
        #expect(try verifier.verify(payload).kind == .valid)
        #expect(cache.statistics.recoveries == 1)
        #expect(cache.statistics.hits == 1)
        // Another ticket with the same certificate: still no certificate recovery.
        #expect(try verifier.verify(Self.pki.barcode(number: 99)).kind == .valid)
        #expect(cache.statistics.recoveries == 1)
        // A tampered ticket under a cached certificate is still caught (the ticket is always recovered).
        var tampered = payload
        tampered[135] ^= 1
        #expect(try verifier.verify(tampered).kind == .invalidSignature)
        // A certificate that fails is never cached.
        var badCertificate = payload
        badCertificate[200] ^= 1
        #expect(try verifier.verify(badCertificate).kind == .invalidSignature)
        #expect(try verifier.verify(badCertificate).kind == .invalidSignature)
        #expect(cache.statistics.recoveries == 3)
        #expect(cache.statistics.count == 1)
    }

    @Test("the cache is bounded and safe to share between threads")
    func cacheBoundsAndConcurrency() async throws {
        let certificates = try Self.pki.authorities()
        let shared = VDVIssuerCertificateCache(capacity: 2)
        let chain = VDVChainVerifier(certificates: certificates, cache: shared)
        let payloads = [
            Self.pki.barcode(),
            Self.pki.barcode(certificate: Self.pki.issuerCertificate(expiry: (2031, 11, 30))),
            Self.pki.barcode(certificate: Self.pki.issuerCertificate(expiry: (2031, 10, 31))),
        ].map { try! VDVBarcode(parsing: $0) }
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<4 {
                group.addTask {
                    for round in 0..<30 {
                        let outcome = try? chain.open(payloads[(task + round) % 3], at: VDVTestPKI.inspection)
                        guard case .opened = outcome else {
                            Issue.record("a ticket did not open")
                            return
                        }
                    }
                }
            }
        }
        let statistics = shared.statistics
        #expect(statistics.count <= 2)
        #expect(statistics.hits + statistics.recoveries == 120)
        // Three certificates through two places: some are dropped (two tasks may recover the same one at once).
        #expect(statistics.evictions > 0)
        #expect(statistics.evictions <= statistics.recoveries - statistics.count)
    }

    @Test("sub-CA import: signed under the pinned root only; bare bodies only when trusted unsigned")
    func subCAImport() throws {
        let pki = Self.pki
        let root = try VDVCertificateImport.root(pki.rootFile())
        #expect(root.origin == .pinnedRoot)
        #expect(root.key.bits == 1984)
        #expect(root.reference == pki.rootReference)
        // Its end date (2021) has passed; it still anchors.
        let accepted = try VDVCertificateImport.subCA(
            pki.subCAFile(pki.subCAReference, key: pki.subCA), root: root, trustUnsigned: false)
        #expect(accepted.origin == .verified(under: pki.rootReference))
        #expect(accepted.reference == pki.subCAReference)
        #expect(accepted.key.bits == 1536)
        #expect(accepted.summary == "DEVDV 11 42 21, RSA 1536, valid until 01.12.2032, verified under EUVDV 18 03 06")

        // Signed by a root that is not the pinned one: refused, whatever it claims.
        let stranger = pki.subCAFile(pki.subCAReference, key: pki.subCA, signer: pki.otherRoot)
        #expect(throws: VDVImportError.self) {
            try VDVCertificateImport.subCA(stranger, root: root, trustUnsigned: false)
        }
        #expect(throws: VDVImportError.self) {
            try VDVCertificateImport.subCA(stranger, root: root, trustUnsigned: true)
        }
        let strangerNamed = pki.subCAFile(
            pki.subCAReference, key: pki.subCA, signer: pki.otherRoot, authority: pki.otherRootReference)
        let otherRoot = try VDVCertificateImport.root(pki.otherRootFile())
        #expect(throws: VDVImportError.self) {
            try VDVCertificateImport.subCA(strangerNamed, root: root, trustUnsigned: false)
        }
        #expect(
            try VDVCertificateImport.subCA(strangerNamed, root: otherRoot, trustUnsigned: false).reference
                == pki.subCAReference)
        // A signed certificate needs a root to be checked under.
        #expect(throws: VDVImportError.self) {
            try VDVCertificateImport.subCA(
                pki.subCAFile(pki.subCAReference, key: pki.subCA), root: nil, trustUnsigned: true)
        }

        // A bare body: only with the flag; and it must name the pinned root when one is given.
        let bare = VDVWriter.clearCertificate(pki.subCABody(pki.subCAReference, key: pki.subCA, expiry: (2032, 12, 1)))
        #expect(throws: VDVImportError.self) { try VDVCertificateImport.subCA(bare, root: root, trustUnsigned: false) }
        #expect(try VDVCertificateImport.subCA(bare, root: root, trustUnsigned: true).origin == .trustedUnsigned)
        #expect(throws: VDVImportError.self) {
            try VDVCertificateImport.subCA(bare, root: otherRoot, trustUnsigned: true)
        }

        // A clear body with the root's PKCS#1 signature is checked like the recovery form.
        let body = pki.subCABody(pki.subCAReference, key: pki.subCA, expiry: (2032, 12, 1))
        let clearSigned = VDVWriter.clearCertificate(body, signature: pki.root.pkcs1Signature(body))
        #expect(
            try VDVCertificateImport.subCA(clearSigned, root: root, trustUnsigned: false).origin
                == .verified(under: pki.rootReference))
        let clearForged = VDVWriter.clearCertificate(body, signature: pki.otherRoot.pkcs1Signature(body))
        #expect(throws: VDVImportError.self) {
            try VDVCertificateImport.subCA(clearForged, root: root, trustUnsigned: false)
        }
        // Garbage is refused with a reason, not a crash.
        #expect(throws: VDVImportError.self) {
            try VDVCertificateImport.subCA([0x7F, 0x21, 0x05], root: root, trustUnsigned: true)
        }
    }

    @Test("root import: clear and self-signed only; a wrong self-signature or the recovery form is refused")
    func rootImport() throws {
        let pki = Self.pki
        // The shipped root has no signature at all: pinned by value.
        let shipped = try VDVCertificateImport.root(try VDVFixtures.bytes("certs/4555564456100106.vdv-cert"))
        #expect(shipped.summary == "EUVDV 10 01 06, RSA 1984, valid until 01.12.2021, pinned root")
        var forged = pki.rootFile()
        forged[forged.count - 5] ^= 1
        #expect(throws: VDVImportError.self) { try VDVCertificateImport.root(forged) }
        let recoveryForm = VDVWriter.signedCertificate(
            VDVWriter.body(
                profile: 7, authority: pki.rootReference, holder: VDVWriter.caHolder(pki.rootReference), role: 0x30,
                expiry: (2031, 1, 1), key: pki.root),
            signer: pki.root)
        #expect(throws: VDVImportError.self) { try VDVCertificateImport.root(recoveryForm) }
        #expect(throws: VDVImportError.self) {
            try VDVCertificateImport.root(
                VDVWriter.clearCertificate(pki.subCABody(pki.subCAReference, key: pki.subCA, expiry: (2032, 1, 1))))
        }
        #expect(throws: VDVImportError.self) {
            try VDVCertificateImport.root(try VDVFixtures.bytes("certs/4445564456110216.vdv-cert"))
        }
    }
}
