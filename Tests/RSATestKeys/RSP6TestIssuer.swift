import Foundation
import TicketFormats

/// A UK RSP6 issuer of the tests' own: an RSA key that signs tickets written field by field, and the key file
/// (`[{"n", "e"}]`) an issuer publishes, for `farecheck keys import --rsp6`.
public struct RSP6TestIssuer: Sendable {
    /// The issuer id the texts carry (characters 13–14).
    public let issuerID: String
    /// The signing key.
    public let key: TestRSAKey

    public init(issuerID: String = "ZZ", bits: Int = 1024) {
        self.issuerID = issuerID
        key = TestRSAKey(bits: bits)
    }

    /// The barcode text of `ticket` (the bit field, e.g. `RSP6TicketWriter.full()`): the PKCS#1 v1.5 block of
    /// `padding` around it, the raw private operation, the result as base-26 letters behind the clear header.
    ///
    /// - Parameters:
    ///   - reference: the 9 characters of the clear header (the ticket's own reference unless a test alters it).
    ///   - version: the version characters.
    public func text(
        _ ticket: [UInt8], reference: String = "ABC123XYZ", padding: RSP6Padding = .type1, version: String = "06"
    ) -> [UInt8] {
        let k = key.byteCount
        precondition(
            ticket.count <= k - 11, "an RSP6 ticket of \(ticket.count) bytes does not fit an RSA-\(k * 8) block")
        let fill = k - 3 - ticket.count
        let padded: [UInt8] =
            switch padding {
            case .type1: Array(repeating: 0xFF, count: fill)
            case .type2: (0..<fill).map { UInt8($0 * 37 % 255 + 1) }
            }
        let block = [0x00, padding == .type1 ? 0x01 : 0x02] + padded + [0x00] + ticket
        return header(reference: reference, version: version)
            + RSP6Barcode.letters(forBlock: key.privateOperation(block))
    }

    /// A text whose RSA block is `block` as given (no padding added): for blocks a genuine issuer never makes.
    public func text(rawBlock block: [UInt8], reference: String = "ABC123XYZ") -> [UInt8] {
        header(reference: reference, version: "06") + RSP6Barcode.letters(forBlock: key.privateOperation(block))
    }

    /// `06`, the reference, `00`, the issuer id.
    public func header(reference: String, version: String = "06") -> [UInt8] {
        Array((version + reference + "00" + issuerID).utf8)
    }

    /// The key file the issuer publishes: a JSON array with its one key.
    public var keyFileJSON: [UInt8] {
        Array(
            #"[{"n": "\#(Data(key.modulus).base64EncodedString())", "e": "\#(Data(key.exponent).base64EncodedString())"}]"#
                .utf8)
    }
}
