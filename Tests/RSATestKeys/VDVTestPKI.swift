import FareCore
import Foundation
import Signatures
import TicketFormats
import Verification

/// Writes CV certificates and barcodes for the test PKI.
public enum VDVWriter {
    public static let iso9796OID: [UInt8] = [0x2B, 0x24, 0x03, 0x04, 0x02, 0x02, 0x01]
    public static let sha1WithRSAOID: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x05]

    public static func bcd(_ value: Int, digits: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        var rest = value
        for _ in 0..<(digits / 2) {
            let pair = rest % 100
            rest /= 100
            bytes.insert(UInt8((pair / 10) << 4 | pair % 10), at: 0)
        }
        return bytes
    }

    /// A certificate body (section 3 of the reference).
    public static func body(
        profile: UInt8, authority: VDVCAReference, holder: [UInt8], role: UInt8, expiry: (Int, Int, Int),
        oid: [UInt8] = iso9796OID, key: TestRSAKey
    ) -> [UInt8] {
        precondition(holder.count == 12)
        return [profile] + authority.bytes + holder + Array("VDV_KA".utf8) + [role]
            + bcd(expiry.0, digits: 4) + bcd(expiry.1, digits: 2) + bcd(expiry.2, digits: 2) + oid + key.modulus
            + key.exponent
    }

    /// The CHR of a CA.
    public static func caHolder(_ reference: VDVCAReference) -> [UInt8] { [0, 0, 0, 0] + reference.bytes }

    /// The CHR of a SAM: organisation, SAM expiry YYMM, valid from YYMMDD, owner, SAM id.
    public static func samHolder(organisation: Int, samID: Int) -> [UInt8] {
        let org: [UInt8] = [UInt8(organisation >> 8), UInt8(organisation & 0xFF)]
        return org + [0x31, 0x12] + [0x24, 0x01, 0x01] + org
            + [UInt8(samID >> 16 & 0xFF), UInt8(samID >> 8 & 0xFF), UInt8(samID & 0xFF)]
    }

    /// `7F21 { 5F37 signature, 5F38 remainder }`: a body hidden in its ISO 9796-2 signature.
    public static func signedCertificate(_ body: [UInt8], signer: TestRSAKey) -> [UInt8] {
        let (signature, remainder) = signer.iso9796Signature(body)
        return BERTLV(
            tag: VDVTag.certificate,
            value: BERTLV(tag: VDVTag.certificateSignature, value: signature).encoded
                + BERTLV(tag: VDVTag.certificateRemainder, value: remainder).encoded
        ).encoded
    }

    /// `7F21 { 5F4E body (, 5F37 signature) }`.
    public static func clearCertificate(_ body: [UInt8], signature: [UInt8]? = nil) -> [UInt8] {
        var content = BERTLV(tag: VDVTag.certificateBody, value: body).encoded
        if let signature { content += BERTLV(tag: VDVTag.certificateSignature, value: signature).encoded }
        return BERTLV(tag: VDVTag.certificate, value: content).encoded
    }

    /// Ticket data: a Deutschland-Ticket of `holder` (given#family) sold by `organisation`.
    public static func entitlement(
        number: UInt32, organisation: Int, from: VDVDateTime, until: VDVDateTime, holder: String = "Erika#Musterfrau",
        samID: Int
    ) -> [UInt8] {
        func be(_ value: Int, _ count: Int) -> [UInt8] {
            (0..<count).map { UInt8(truncatingIfNeeded: value >> (8 * (count - 1 - $0))) }
        }
        func word(_ dateTime: VDVDateTime) -> [UInt8] { be(Int(dateTime.raw), 4) }
        let basic = BERTLV(
            tag: [0xDA], value: [0, 1, 0, 0, 0, 0, 0, 2] + be(4_900, 3) + be(700, 2) + [0] + be(1, 3))
        let traveller = BERTLV(tag: [0xDB], value: [2] + bcd(19_900_101, digits: 8) + Array(holder.utf8))
        let area = BERTLV(tag: [0xDC], value: [0x0F, 0x13, 0x88, 0x00, 0x01])
        let product = BERTLV(tag: [0x85], value: basic.encoded + traveller.encoded + area.encoded)
        let sold = VDVDateTime(year: 2030, month: 5, day: 20, hour: 10, minute: 0, second: 0)
        let transaction =
            be(organisation, 2) + [17] + be(3, 2) + be(organisation, 2) + word(sold) + [255]
            + [0, 0, 0] + [0, 0]
        let sam = be(1_000, 4) + [1] + be(2_000, 4) + be(samID, 3)
        return be(Int(number), 4) + be(organisation, 2) + be(9_999, 2) + be(3_000, 2) + word(from) + word(until)
            + product.encoded + transaction + [0x8A, 0x00] + sam + [UInt8](repeating: 0, count: 6)
            + Array("VDV".utf8) + [0x11, 0x09]
    }

    /// A barcode: `9E`, `9A`, `7F21`, `42`.
    public static func barcode(
        entitlement: [UInt8], issuerKey: TestRSAKey, certificate: [UInt8], caReference: VDVCAReference
    ) -> [UInt8] {
        let (signature, remainder) = issuerKey.iso9796Signature(entitlement)
        return BERTLV(tag: VDVTag.ticketSignature, value: signature).encoded
            + BERTLV(tag: VDVTag.ticketRemainder, value: remainder).encoded + certificate
            + BERTLV(tag: VDVTag.caReference, value: caReference.bytes).encoded
    }
}

/// A complete VDV PKI made in the tests: a root, sub-CAs under it, an issuer (SAM) key, and a stranger root.
public struct VDVTestPKI: Sendable {
    public init() {}

    public static let shared = VDVTestPKI()

    public let root = TestRSAKey(bits: 1984)
    public let otherRoot = TestRSAKey(bits: 1984)
    public let subCA = TestRSAKey(bits: 1536)
    public let otherSubCA = TestRSAKey(bits: 1536)
    /// The issuer key with the sample's unusual exponent, so that nothing assumes 65537.
    public let issuer = TestRSAKey(bits: 1024, exponent: 0x4000_0081)

    public let rootReference = VDVCAReference(hex: "4555564456180306")!
    public let otherRootReference = VDVCAReference(hex: "4555564456120106")!
    public let subCAReference = VDVCAReference(hex: "4445564456114221")!
    public let otherSubCAReference = VDVCAReference(hex: "4445564456114321")!
    /// A sub-CA certificate for `subCA`'s key that ended in 2029.
    public let expiredSubCAReference = VDVCAReference(hex: "4445564456114419")!

    public static let organisation = 4_711
    public static let samID = 0x01_23_45
    public static let from = VDVDateTime(year: 2030, month: 6, day: 1, hour: 0, minute: 0, second: 0)
    public static let until = VDVDateTime(year: 2030, month: 6, day: 30, hour: 23, minute: 59, second: 58)
    /// Inside the ticket's validity and every certificate's.
    public static let inspection = try! Date("2030-06-15T12:00:00Z", strategy: .iso8601)

    /// The root as pinned: its clear body with a PKCS#1 self-signature (`expired` in 2021 like the real one).
    public func rootFile() -> [UInt8] {
        let body = VDVWriter.body(
            profile: 7, authority: rootReference, holder: VDVWriter.caHolder(rootReference), role: 0x30,
            expiry: (2021, 12, 1), oid: VDVWriter.sha1WithRSAOID, key: root)
        return VDVWriter.clearCertificate(body, signature: root.pkcs1Signature(body))
    }

    /// The stranger root, pinned nowhere.
    public func otherRootFile() -> [UInt8] {
        let body = VDVWriter.body(
            profile: 7, authority: otherRootReference, holder: VDVWriter.caHolder(otherRootReference), role: 0x30,
            expiry: (2031, 12, 1), oid: VDVWriter.sha1WithRSAOID, key: otherRoot)
        return VDVWriter.clearCertificate(body, signature: otherRoot.pkcs1Signature(body))
    }

    /// A sub-CA body under `authority`.
    public func subCABody(
        _ reference: VDVCAReference, key: TestRSAKey, authority: VDVCAReference? = nil, expiry: (Int, Int, Int)
    ) -> [UInt8] {
        VDVWriter.body(
            profile: 3, authority: authority ?? rootReference, holder: VDVWriter.caHolder(reference), role: 0x30,
            expiry: expiry, key: key)
    }

    /// A published sub-CA certificate: body recovered with `signer` (the root by default).
    public func subCAFile(
        _ reference: VDVCAReference, key: TestRSAKey, signer: TestRSAKey? = nil, authority: VDVCAReference? = nil,
        expiry: (Int, Int, Int) = (2032, 12, 1)
    ) -> [UInt8] {
        VDVWriter.signedCertificate(
            subCABody(reference, key: key, authority: authority, expiry: expiry), signer: signer ?? root)
    }

    /// The issuer certificate a barcode carries.
    public func issuerCertificate(
        signer: TestRSAKey? = nil, authority: VDVCAReference? = nil, expiry: (Int, Int, Int) = (2031, 12, 31)
    ) -> [UInt8] {
        let body = VDVWriter.body(
            profile: 4, authority: authority ?? subCAReference,
            holder: VDVWriter.samHolder(organisation: Self.organisation, samID: Self.samID), role: 0x22,
            expiry: expiry, key: issuer)
        return VDVWriter.signedCertificate(body, signer: signer ?? subCA)
    }

    /// A Deutschland-Ticket of the test PKI.
    public func barcode(
        number: UInt32 = 123_456, certificate: [UInt8]? = nil, caReference: VDVCAReference? = nil,
        holder: String = "Erika#Musterfrau"
    ) -> [UInt8] {
        VDVWriter.barcode(
            entitlement: VDVWriter.entitlement(
                number: number, organisation: Self.organisation, from: Self.from, until: Self.until, holder: holder,
                samID: Self.samID),
            issuerKey: issuer, certificate: certificate ?? issuerCertificate(),
            caReference: caReference ?? subCAReference)
    }

    /// The trust an inspector would hold: the pinned root and the sub-CAs imported under it.
    public func authorities() throws -> VDVCertificateSet {
        let pinned = try VDVCertificateImport.root(rootFile())
        var set = VDVCertificateSet([pinned])
        set.add(
            try VDVCertificateImport.subCA(subCAFile(subCAReference, key: subCA), root: pinned, trustUnsigned: false))
        set.add(
            try VDVCertificateImport.subCA(
                subCAFile(otherSubCAReference, key: otherSubCA), root: pinned, trustUnsigned: false))
        set.add(
            try VDVCertificateImport.subCA(
                subCAFile(expiredSubCAReference, key: subCA, expiry: (2029, 12, 1)), root: pinned, trustUnsigned: false)
        )
        return set
    }
}
