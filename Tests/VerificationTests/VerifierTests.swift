import FareCore
import Foundation
import Signatures
import Testing
import TicketFormats

@testable import Verification

/// An issuer with real keys, making real signed payloads for the verifier to judge.
struct TestIssuer {
    static let es256 = try! TestIssuer(.es256)
    static let edDSA = try! TestIssuer(.edDSA)
    static let ps256 = try! TestIssuer(.ps256)
    static let all = [es256, edDSA, ps256]

    let algorithm: COSEAlgorithm
    let privateKey: PrivateKey
    let keyID: [UInt8]
    var issuer = "demo-transit"

    init(_ algorithm: COSEAlgorithm) throws {
        self.algorithm = algorithm
        switch algorithm {
        case .es256: privateKey = try PrivateKey.generate(.ecP256)
        case .edDSA: privateKey = try PrivateKey.generate(.ed25519)
        case .ps256: privateKey = try PrivateKey.generate(.rsa(bits: 2048))
        }
        keyID = Array(digest(.sha256, privateKey.publicKey.spkiDER).prefix(8))
    }

    var scheme: SignatureScheme {
        switch algorithm {
        case .es256: .ecdsa(.sha256, .raw)
        case .edDSA: .eddsa
        case .ps256: .rsaPSS(.sha256)
        }
    }

    func trustedKey(issuer: String? = nil, notBefore: Date? = nil, notAfter: Date? = nil) -> TrustedKey {
        TrustedKey(
            family: .fc1, issuer: IssuerID(issuer ?? self.issuer), keyID: KeyID(keyID.hexString),
            algorithm: algorithm.name,
            publicKey: privateKey.publicKey, notBefore: notBefore, notAfter: notAfter
        )
    }

    func cose(_ claimsBytes: [UInt8], keyID: [UInt8]? = nil, algorithmID: Int64? = nil) throws -> [UInt8] {
        let protected = CBOREncoder.encode(
            .map([(.unsigned(1), .int(algorithmID ?? algorithm.rawValue)), (.unsigned(4), .bytes(keyID ?? self.keyID))])
        )
        let signature = try privateKey.signature(
            for: COSESign1.sigStructure(protectedHeaderBytes: protected, payload: claimsBytes), scheme: scheme)
        return CBOREncoder.encode(
            .tagged(18, .array([.bytes(protected), .map([]), .bytes(claimsBytes), .bytes(signature)])))
    }

    func payload(_ claims: FC1.Claims, transport: FC1.Transport = .text(prefix: "FC1:")) throws -> [UInt8] {
        FC1.encode(cose: try cose(claims.encoded()), transport: transport)
    }
}

let inspection = Date(timeIntervalSince1970: 1_800_000_000)

func dayTicket(
    _ id: [UInt8] = [0xC0, 0xFF, 0xEE], from: TimeInterval = -3600, until: TimeInterval = 82800,
    issuer: String = "demo-transit"
) -> FC1.Claims {
    FC1.Claims(
        issuer: issuer, ticketID: id, issuedAt: inspection.addingTimeInterval(-7200),
        validFrom: inspection.addingTimeInterval(from),
        validUntil: inspection.addingTimeInterval(until), product: "day", zones: ["A", "B"], category: "adult",
        holder: "ID ****1234"
    )
}

func verifier(_ trust: TrustSnapshot, skew: TimeInterval = 120) -> TicketVerifier {
    var configuration = TicketVerifier.Configuration()
    configuration.clockSkew = skew
    return TicketVerifier(trust: trust, clock: FixedClock(inspection), configuration: configuration)
}

func trust(_ keys: TrustedKey...) -> TrustSnapshot {
    var snapshot = TrustSnapshot()
    for key in keys { snapshot.add(key) }
    return snapshot
}

@Suite("Verifier verdicts, each from a real payload")
struct VerifierTests {
    @Test("a genuine ticket is valid, for every algorithm and transport")
    func valid() throws {
        for issuer in TestIssuer.all {
            for transport: FC1.Transport in [.text(prefix: "FC1:"), .zlib, .plain] {
                let verdict = try verifier(trust(issuer.trustedKey())).verify(
                    try issuer.payload(dayTicket(), transport: transport))
                #expect(verdict.kind == .valid, "\(issuer.algorithm.name) \(transport): \(verdict.reason)")
                #expect(verdict.signature == .valid)
                #expect(verdict.ticket?.product == "day")
                #expect(verdict.ticket?.holder == "ID ****1234")
                #expect(verdict.keyID?.rawValue == issuer.keyID.hexString)
                #expect(verdict.format == .fc1)
            }
        }
    }

    @Test("a flipped byte in the signature or the signed claims is an invalid signature")
    func tampered() throws {
        for issuer in TestIssuer.all {
            let cose = try issuer.cose(dayTicket().encoded())
            let message = try COSESign1(decoding: cose)
            // Last byte of the signature.
            var badSignature = cose
            badSignature[badSignature.count - 1] ^= 0x01
            // A byte inside the claims: "day" becomes "dax".
            var badClaims = cose
            let range = try #require(badClaims.firstRange(of: Array("day".utf8)))
            badClaims[range.upperBound - 1] = UInt8(ascii: "x")
            for bytes in [badSignature, badClaims] {
                let verdict = try verifier(trust(issuer.trustedKey())).verify(FC1.encode(cose: bytes, transport: .zlib))
                #expect(verdict.kind == .invalidSignature, "\(issuer.algorithm.name): \(verdict.reason)")
                #expect(verdict.signature == .invalid)
                #expect(verdict.ticket == nil, "claims of a forged ticket must not be shown")
            }
            #expect(message.signature.count > 0)
        }
    }

    @Test("a ticket signed by another key under a trusted kid is an invalid signature")
    func otherKey() throws {
        let genuine = TestIssuer.es256
        var forger = try TestIssuer(.es256)
        forger.issuer = genuine.issuer
        let payload = FC1.encode(cose: try forger.cose(dayTicket().encoded(), keyID: genuine.keyID), transport: .zlib)
        let verdict = try verifier(trust(genuine.trustedKey())).verify(payload)
        #expect(verdict.kind == .invalidSignature)
        #expect(verdict.reason.contains("altered or forged"))
    }

    @Test("an algorithm that does not fit the key is an invalid signature, an unknown one unsupported")
    func algorithmMismatch() throws {
        let issuer = TestIssuer.edDSA
        let claimsES256 = FC1.encode(cose: try issuer.cose(dayTicket().encoded(), algorithmID: -7), transport: .zlib)
        let verdict = try verifier(trust(issuer.trustedKey())).verify(claimsES256)
        #expect(verdict.kind == .invalidSignature)
        let es384 = FC1.encode(cose: try issuer.cose(dayTicket().encoded(), algorithmID: -35), transport: .zlib)
        let unsupported = try verifier(trust(issuer.trustedKey())).verify(es384)
        #expect(unsupported.kind == .unsupported)
        #expect(unsupported.signature == .unsupported)
    }

    @Test("a kid with no trusted key is unknown-key")
    func unknownKey() throws {
        let verdict = try verifier(trust(TestIssuer.es256.trustedKey())).verify(
            try TestIssuer.edDSA.payload(dayTicket()))
        #expect(verdict.kind == .unknownKey)
        #expect(verdict.signature == .unknownKey)
        #expect(verdict.keyID?.rawValue == TestIssuer.edDSA.keyID.hexString)
    }

    @Test("a key outside its validity is key-expired, with the signature still valid")
    func keyExpired() throws {
        let issuer = TestIssuer.es256
        let payload = try issuer.payload(dayTicket())
        let expired = try verifier(trust(issuer.trustedKey(notAfter: inspection.addingTimeInterval(-1)))).verify(
            payload)
        #expect(expired.kind == .keyExpired)
        #expect(expired.signature == .valid)
        let early = try verifier(trust(issuer.trustedKey(notBefore: inspection.addingTimeInterval(60)))).verify(payload)
        #expect(early.kind == .keyExpired)
    }

    @Test("a ticket claiming another issuer than its key's is wrong-issuer")
    func wrongIssuer() throws {
        let issuer = TestIssuer.es256
        let payload = try issuer.payload(dayTicket(issuer: "other-transit"))
        let verdict = try verifier(trust(issuer.trustedKey())).verify(payload)
        #expect(verdict.kind == .wrongIssuer)
        #expect(verdict.reason.contains("other-transit"))
    }

    @Test("validity window: expired and not yet valid, with the clock-skew tolerance")
    func validityWindow() throws {
        let issuer = TestIssuer.es256
        let check = verifier(trust(issuer.trustedKey()))
        #expect(try check.verify(try issuer.payload(dayTicket(from: -86400, until: -121))).kind == .expired)
        #expect(try check.verify(try issuer.payload(dayTicket(from: -86400, until: -119))).kind == .valid)
        #expect(try check.verify(try issuer.payload(dayTicket(from: 121, until: 86400))).kind == .notYetValid)
        #expect(try check.verify(try issuer.payload(dayTicket(from: 119, until: 86400))).kind == .valid)
        let strict = verifier(trust(issuer.trustedKey()), skew: 0)
        #expect(try strict.verify(try issuer.payload(dayTicket(from: -86400, until: -1))).kind == .expired)
        let verdict = try check.verify(try issuer.payload(dayTicket(from: -86400, until: -3600)))
        #expect(verdict.signature == .valid)
        #expect(verdict.ticket?.validUntil == inspection.addingTimeInterval(-3600))
    }

    @Test("a revoked ticket, and every ticket of a revoked key, is revoked")
    func revoked() throws {
        let issuer = TestIssuer.edDSA
        var snapshot = trust(issuer.trustedKey())
        snapshot.revokeTicket([0xBA, 0xD0], issuer: "demo-transit", Revocation(reason: "reported stolen"))
        let ticket = try verifier(snapshot).verify(try issuer.payload(dayTicket([0xBA, 0xD0])))
        #expect(ticket.kind == .revoked)
        #expect(ticket.reason.contains("reported stolen"))
        #expect(try verifier(snapshot).verify(try issuer.payload(dayTicket([0x60, 0x0D]))).kind == .valid)
        // The same ticket id from another issuer is not revoked.
        snapshot.revokeKey(KeyID(issuer.keyID.hexString), issuer: "demo-transit", family: .fc1)
        #expect(try verifier(snapshot).verify(try issuer.payload(dayTicket([0x60, 0x0D]))).kind == .revoked)
    }

    @Test("a recently activated ticket is valid with a warning")
    func recentlyActivated() throws {
        let issuer = TestIssuer.es256
        var claims = dayTicket()
        claims.activatedAt = inspection.addingTimeInterval(-30)
        claims.activationDuration = 5400
        let verdict = try verifier(trust(issuer.trustedKey())).verify(try issuer.payload(claims))
        #expect(verdict.kind == .valid)
        #expect(verdict.warnings.map(\.code) == ["recently-activated"])
        claims.activatedAt = inspection.addingTimeInterval(-600)
        #expect(try verifier(trust(issuer.trustedKey())).verify(try issuer.payload(claims)).warnings.isEmpty)
    }

    @Test("a well-signed payload whose claims make no ticket is malformed with signature valid")
    func signedGarbage() throws {
        let issuer = TestIssuer.es256
        let claims = CBOREncoder.encode(
            .map([(.unsigned(1), .text("demo-transit")), (.unsigned(4), .text("tomorrow"))]))
        let verdict = try verifier(trust(issuer.trustedKey())).verify(
            FC1.encode(cose: try issuer.cose(claims), transport: .zlib))
        #expect(verdict.kind == .malformed)
        #expect(verdict.signature == .valid)
        #expect(verdict.reason.contains("exp (4)"))
    }

    @Test("broken payloads are malformed or unsupported, never a crash")
    func brokenPayloads() throws {
        let issuer = TestIssuer.es256
        let check = verifier(trust(issuer.trustedKey()))
        let good = try issuer.payload(dayTicket(), transport: .zlib)
        let text = try issuer.payload(dayTicket())
        let bomb = Zlib.deflate([0xD2] + [UInt8](repeating: 0, count: 1 << 20))
        var hugeLength = try issuer.cose(dayTicket().encoded())
        hugeLength.replaceSubrange(2..<3, with: [0x5B, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])
        let cases: [(String, [UInt8], VerdictKind)] = [
            ("zlib bomb", bomb, .malformed),
            ("truncated zlib", Array(good.dropLast(20)), .malformed),
            ("truncated text", Array(text.dropLast(7)), .malformed),
            ("bad base45", Array("FC1:".utf8) + Array("abc~".utf8), .malformed),
            ("huge length prefix", hugeLength, .malformed),
            ("empty", [], .malformed),
            ("wrong prefix", Array("HC1:".utf8) + text.dropFirst(4), .unsupported),
            ("plain text", Array("hello, inspector".utf8), .unsupported),
        ]
        for (name, payload, expected) in cases {
            let verdict = try check.verify(payload)
            #expect(verdict.kind == expected, "\(name): \(verdict.kind) \(verdict.reason)")
            #expect(verdict.signature == .notChecked, "\(name)")
            #expect(!verdict.reason.isEmpty)
        }
        var generator = SystemRandomNumberGenerator()
        for length in [1, 2, 17, 64, 300, 2000] {
            let random = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let verdict = try check.verify(random)
            #expect(verdict.kind != .valid)
        }
        // Every single-byte corruption of a genuine payload gives a verdict other than valid.
        for index in stride(from: 0, to: good.count, by: 3) {
            var bytes = good
            bytes[index] ^= 0x5A
            #expect(try check.verify(bytes).kind != .valid, "byte \(index)")
        }
    }

    @Test("the verifier throws only when its key directory fails")
    func directoryFailure() throws {
        struct BrokenDirectory: KeyDirectory, RevocationList {
            struct Gone: Error {}
            func key(family: KeyFamily, issuer: IssuerID?, keyID: KeyID) throws -> TrustedKey? { throw Gone() }
            func keys(family: KeyFamily, issuer: IssuerID, keyID: KeyID) throws -> [TrustedKey] { throw Gone() }
            func keys(family: KeyFamily, issuer: IssuerID) throws -> [TrustedKey] { throw Gone() }
            func revocation(ofTicket ticketID: TicketID, issuer: IssuerID) throws -> Revocation? { throw Gone() }
            func revocation(ofKey key: TrustedKey) throws -> Revocation? { throw Gone() }
        }
        let broken = BrokenDirectory()
        let check = TicketVerifier(keys: broken, revocations: broken, clock: FixedClock(inspection))
        #expect(throws: VerifierError.self) { try check.verify(try TestIssuer.es256.payload(dayTicket())) }
        // UIC keys are looked up by issuer and id, all of them: that lookup's failure is the verifier's too.
        let uic = try UICFixtures.bytes(UICFixtures.cityMobil)
        #expect(throws: VerifierError.self) { try check.verify(uic) }
        // A payload that is rejected before any lookup still gets its verdict.
        #expect(try check.verify(Array("nonsense".utf8)).kind == .unsupported)
    }
}

/// A ticket shares its fields between copies (see `Ticket`): a change to one copy must never show in another,
/// as a verdict's ticket must not change when a policy or the daemon adjusts its own copy.
@Suite("Ticket copies")
struct TicketCopyTests {
    @Test("changing a copy of a ticket leaves the original as it was, details included")
    func copiesAreIndependent() {
        let original = Ticket(
            format: .vdvKA, issuer: "57", ticketID: [0, 1, 2, 3], validFrom: Date(timeIntervalSince1970: 0),
            product: "Deutschland-Ticket", holder: "Erika Musterfrau",
            deferredDetails: { [("product", "Deutschland-Ticket (9999)")] })
        var copy = original
        copy.issuer = "6100"
        copy.holder = nil
        copy.ticketID = TicketID(copy.ticketID.bytes + [4])
        copy.appendDetails { [("extra", "line")] }
        #expect(original.issuer == "57")
        #expect(original.holder == "Erika Musterfrau")
        #expect(original.ticketID == [0, 1, 2, 3])
        #expect(original.details.map(\.label) == ["product"])
        #expect(copy.issuer == "6100")
        #expect(copy.holder == nil)
        #expect(copy.ticketID == [0, 1, 2, 3, 4])
        #expect(copy.details.map(\.label) == ["product", "extra"])
        #expect(copy.product == "Deutschland-Ticket")
    }
}
