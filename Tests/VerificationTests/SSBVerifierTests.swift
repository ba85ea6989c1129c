import FareCore
import Foundation
import Signatures
import TestSupport
import Testing
import TicketFormats

@testable import Verification

/// The SŽ sample tickets and SŽ's key 1 (the fixture tree's `ssb`, copied from shared/fixtures/formats/ssb).
enum SSBVerifierFixtures {
    static func bytes(_ name: String) throws -> [UInt8] { try Fixtures.bytes("ssb/\(name)") }

    static let nrt = "sz-nrt.bin"
    static let group = "sz-group.bin"

    static func szKey() throws -> PublicKey {
        try PublicKey(pem: String(decoding: try bytes("sz-1179-key1.pub.pem"), as: UTF8.self))
    }

    /// Trust as an inspector holds it after `farecheck keys import --issuer 1179 --kid 1 sz-1179-key1.pub.pem`:
    /// the key stored as a UIC key (family `uic`), beside the UIC key list snapshot.
    static func trust() throws -> TrustSnapshot {
        var snapshot = try UICFixtures.trust()
        snapshot.add(TrustedKey(family: .uic, issuer: "1179", keyID: "1", algorithm: nil, publicKey: try szKey()))
        return snapshot
    }

    /// A DSA 1024/160 key made once per run, to sign frames in the layouts SŽ does not use.
    static let dsa1024 = try! PrivateKey.generate(.dsa(bits: 1024, qBits: 160))

    /// Trust holding `dsa1024` as key 1179/1.
    static func generatedTrust() -> TrustSnapshot {
        var snapshot = TrustSnapshot()
        snapshot.add(
            TrustedKey(
                family: .uic, issuer: "1179", keyID: "1", algorithm: "SHA1withDSA(1024,160)",
                publicKey: dsa1024.publicKey))
        return snapshot
    }

    /// `data` (58 bytes) signed with `dsa1024`, the signature laid out as `form`.
    static func signed(_ data: [UInt8], form: SSBSignatureForm) throws -> [UInt8] {
        let signature: [UInt8]
        switch form {
        case .der: signature = try dsa1024.signature(for: data, scheme: .dsa(.sha1, .der))
        case .raw20: signature = try dsa1024.signature(for: data, scheme: .dsa(.sha1, .raw))
        case .raw28: preconditionFailure("a DSA 1024/160 key makes 20-byte integers")
        }
        return data + signature + [UInt8](repeating: 0, count: 56 - signature.count)
    }
}

@Suite("ERA SSB verification")
struct SSBVerifierTests {
    let trust = try! SSBVerifierFixtures.trust()

    func verify(_ payload: [UInt8], at instant: Date, trust: TrustSnapshot? = nil) throws -> Verdict {
        try TicketVerifier(trust: trust ?? self.trust, clock: FixedClock(instant)).verify(payload)
    }

    @Test("both SŽ samples verify with SŽ's key and are valid on their days")
    func validOnTheirDays() throws {
        let cases: [(String, String)] = [
            (SSBVerifierFixtures.nrt, "2022-07-01T10:00:00Z"),
            (SSBVerifierFixtures.group, "2024-04-21T08:00:00Z"),
            (SSBVerifierFixtures.group, "2024-05-05T20:00:00Z"),
        ]
        for (name, when) in cases {
            let verdict = try verify(try SSBVerifierFixtures.bytes(name), at: utc(when))
            #expect(verdict.kind == .valid, "\(name) at \(when): \(verdict.reason)")
            #expect(verdict.signature == .valid)
            #expect(verdict.format == .eraSSB)
            #expect(verdict.issuer == "1179")
            #expect(verdict.keyID == "1")
            #expect(verdict.ticket?.issuer == "1179")
            #expect(verdict.warnings.isEmpty)
        }
    }

    @Test("after their last day the samples are expired, before their first day not yet valid, signature valid")
    func outsideTheirDays() throws {
        let cases: [(String, String, VerdictKind)] = [
            (SSBVerifierFixtures.nrt, "2022-07-02T10:00:00Z", .expired),
            (SSBVerifierFixtures.nrt, "2026-11-23T10:00:00Z", .expired),
            // 23:00 on 30 June in Ljubljana: the ticket of 1 July is not valid yet.
            (SSBVerifierFixtures.nrt, "2022-06-30T21:00:00Z", .notYetValid),
            (SSBVerifierFixtures.group, "2024-04-10T10:00:00Z", .notYetValid),
            (SSBVerifierFixtures.group, "2024-05-06T10:00:00Z", .expired),
        ]
        for (name, when, kind) in cases {
            let verdict = try verify(try SSBVerifierFixtures.bytes(name), at: utc(when))
            #expect(verdict.kind == kind, "\(name) at \(when): \(verdict.reason)")
            #expect(verdict.signature == .valid)
            #expect(verdict.ticket != nil)
        }
    }

    @Test("the SŽ NRT sample as base64 text verifies like the bytes")
    func base64Text() throws {
        let text = Data(try SSBVerifierFixtures.bytes(SSBVerifierFixtures.nrt)).base64EncodedString()
        let verdict = try verify(Array(text.utf8), at: utc("2022-07-01T10:00:00Z"))
        #expect(verdict.kind == .valid)
        #expect(verdict.ticket?.ticketID.bytes == Array("6140001343".utf8))
    }

    @Test("SŽ's key alone, named SHA224withDSA as a key list entry would, is enough")
    func keyAlone() throws {
        var snapshot = TrustSnapshot()
        snapshot.add(
            TrustedKey(
                family: .uic, issuer: "1179", keyID: "1", algorithm: "SHA224withDSA",
                publicKey: try SSBVerifierFixtures.szKey()))
        let verdict = try verify(
            try SSBVerifierFixtures.bytes(SSBVerifierFixtures.nrt), at: utc("2022-07-01T10:00:00Z"), trust: snapshot)
        #expect(verdict.kind == .valid)
    }

    @Test("a validator that does not accept era-ssb says unsupported before any signature work")
    func notAccepted() throws {
        var configuration = TicketVerifier.Configuration()
        configuration.acceptedFormats = [.fc1, .uic9183]
        let verifier = TicketVerifier(
            trust: trust, clock: FixedClock(utc("2022-07-01T10:00:00Z")), configuration: configuration)
        let verdict = try verifier.verify(try SSBVerifierFixtures.bytes(SSBVerifierFixtures.nrt))
        #expect(verdict.kind == .unsupported)
        #expect(verdict.signature == .notChecked)
        #expect(verdict.format == .eraSSB)
    }

    @Test("one flipped bit in the data or in the signature gives invalid-signature")
    func flippedBits() throws {
        for name in [SSBVerifierFixtures.nrt, SSBVerifierFixtures.group] {
            let payload = try SSBVerifierFixtures.bytes(name)
            for (byte, bit) in [(6, 3), (30, 0), (57, 7), (58, 7), (80, 2), (113, 0)] {
                var altered = payload
                altered[byte] ^= 1 << bit
                let verdict = try verify(altered, at: utc("2024-04-25T10:00:00Z"))
                #expect(verdict.kind == .invalidSignature, "\(name) byte \(byte) bit \(bit): \(verdict.reason)")
                #expect(verdict.signature == .invalid)
                #expect(verdict.ticket == nil)
            }
        }
    }

    @Test("a key id with no trusted key gives unknown-key")
    func unknownKey() throws {
        var payload = try SSBVerifierFixtures.bytes(SSBVerifierFixtures.nrt)
        // Key id 1 → 2: bits 18–21 are the middle four bits of byte 2.
        payload[2] = payload[2] & ~0x3C | 2 << 2
        let verdict = try verify(payload, at: utc("2022-07-01T10:00:00Z"))
        #expect(verdict.kind == .unknownKey)
        #expect(verdict.signature == .unknownKey)
        #expect(verdict.keyID == "2")
        #expect(verdict.issuer == "1179")
    }

    @Test("revoked tickets and keys, and expired keys, are refused with the signature valid")
    func policies() throws {
        let payload = try SSBVerifierFixtures.bytes(SSBVerifierFixtures.nrt)
        let when = utc("2022-07-01T10:00:00Z")
        var revokedTicket = trust
        revokedTicket.revokeTicket(TicketID(Array("6140001343".utf8)), issuer: "1179")
        #expect(try verify(payload, at: when, trust: revokedTicket).kind == .revoked)
        var revokedKey = trust
        revokedKey.revokeKey("1", issuer: "1179", family: .uic)
        #expect(try verify(payload, at: when, trust: revokedKey).kind == .revoked)
        var expiredKey = TrustSnapshot()
        expiredKey.add(
            TrustedKey(
                family: .uic, issuer: "1179", keyID: "1", algorithm: nil,
                publicKey: try SSBVerifierFixtures.szKey(), notAfter: utc("2021-12-31T23:59:59Z")))
        let verdict = try verify(payload, at: when, trust: expiredKey)
        #expect(verdict.kind == .keyExpired)
        #expect(verdict.signature == .valid)
    }

    @Test("every truncation and every single-bit flip of both samples gives a verdict, never a valid one")
    func damagedSamples() throws {
        let verifier = TicketVerifier(trust: trust, clock: FixedClock(utc("2024-04-25T10:00:00Z")))
        var kinds: [VerdictKind: Int] = [:]
        for name in [SSBVerifierFixtures.nrt, SSBVerifierFixtures.group] {
            let payload = try SSBVerifierFixtures.bytes(name)
            for length in 0..<payload.count {
                let verdict = try verifier.verify(Array(payload.prefix(length)))
                #expect(verdict.kind == .malformed || verdict.kind == .unsupported, "\(name) cut to \(length)")
                kinds[verdict.kind, default: 0] += 1
            }
            for bit in 0..<(payload.count * 8) {
                var altered = payload
                altered[bit / 8] ^= 0x80 >> UInt8(bit % 8)
                let verdict = try verifier.verify(altered)
                #expect(verdict.kind != .valid && verdict.signature != .valid, "\(name) bit \(bit) flipped")
                kinds[verdict.kind, default: 0] += 1
            }
        }
        #expect(kinds[.invalidSignature, default: 0] > 1_700)
    }

    @Test("DER and 20 + 20 byte signatures of a DSA 1024/160 key verify with SHA-1")
    func otherSignatureLayouts() throws {
        let data = Array(try SSBVerifierFixtures.bytes(SSBVerifierFixtures.nrt).prefix(58))
        for form in [SSBSignatureForm.der, .raw20] {
            let payload = try SSBVerifierFixtures.signed(data, form: form)
            guard case .ssb(let frame) = try PayloadDetector().recognise(payload) else {
                Issue.record("not recognised as SSB")
                continue
            }
            #expect(frame.signatureForm == form)
            let verdict = try verify(
                payload, at: utc("2022-07-01T10:00:00Z"), trust: SSBVerifierFixtures.generatedTrust())
            #expect(verdict.kind == .valid, "\(form): \(verdict.reason)")
            var altered = payload
            altered[20] ^= 0x04
            let forged = try verify(
                altered, at: utc("2022-07-01T10:00:00Z"), trust: SSBVerifierFixtures.generatedTrust())
            #expect(forged.kind == .invalidSignature)
        }
    }

    @Test("a signed frame of an undefined ticket type is unsupported; an issuer-defined one goes unchecked for dates")
    func ticketTypes() throws {
        let data = Array(try SSBVerifierFixtures.bytes(SSBVerifierFixtures.nrt).prefix(58))
        // The ticket type is bits 22–26, across bytes 2 and 3.
        func withType(_ type: Int) -> [UInt8] {
            var bytes = data
            for index in 0..<5 {
                let bit = 22 + index
                let mask = UInt8(0x80) >> UInt8(bit % 8)
                if type >> (4 - index) & 1 == 1 { bytes[bit / 8] |= mask } else { bytes[bit / 8] &= ~mask }
            }
            return bytes
        }
        let undefined = try verify(
            try SSBVerifierFixtures.signed(withType(7), form: .der), at: utc("2022-07-01T10:00:00Z"),
            trust: SSBVerifierFixtures.generatedTrust())
        #expect(undefined.kind == .unsupported)
        #expect(undefined.signature == .valid)
        let bilateral = try verify(
            try SSBVerifierFixtures.signed(withType(23), form: .der), at: utc("2022-07-01T10:00:00Z"),
            trust: SSBVerifierFixtures.generatedTrust())
        #expect(bilateral.kind == .valid)
        #expect(bilateral.warnings.map(\.code) == [VerdictWarning.validityNotCheckedCode])
        #expect(bilateral.ticket?.product == "issuer-defined ticket type 23")
    }

    @Test("a specimen ticket is flagged; version 2 frames verify, version 1 frames are unsupported")
    func specimenAndVersions() throws {
        var data = Array(try SSBVerifierFixtures.bytes(SSBVerifierFixtures.nrt).prefix(58))
        data[5] |= 0x40  // bit 41: specimen
        let specimen = try verify(
            try SSBVerifierFixtures.signed(data, form: .raw20), at: utc("2022-07-01T10:00:00Z"),
            trust: SSBVerifierFixtures.generatedTrust())
        #expect(specimen.kind == .valid)
        #expect(specimen.warnings.map(\.code) == ["specimen"])

        var version2 = Array(try SSBVerifierFixtures.bytes(SSBVerifierFixtures.nrt).prefix(58))
        version2[0] = version2[0] & 0x0F | 0x20
        let verdict = try verify(
            try SSBVerifierFixtures.signed(version2, form: .der), at: utc("2022-07-01T10:00:00Z"),
            trust: SSBVerifierFixtures.generatedTrust())
        #expect(verdict.signature == .valid, "\(verdict.reason)")
        #expect(verdict.ticket?.product == "SSB version 2 ticket")

        var version1 = [UInt8](repeating: 0xA5, count: 107)
        version1[0] = 0x14
        let unsupported = try verify(version1, at: utc("2022-07-01T10:00:00Z"))
        #expect(unsupported.kind == .unsupported)
        #expect(unsupported.signature == .unsupported)
        #expect(unsupported.format == .eraSSB)
    }
}
