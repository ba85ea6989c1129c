import FareCore
import Foundation
import Signatures
import ValidationAPI

/// Whether `name` may name a device or an operator: 1 to 128 bytes of printable characters without spaces, as it goes
/// into log lines, listings and the report page.
func isAccountName(_ name: String) -> Bool {
    let printable = name.unicodeScalars.allSatisfy { scalar in
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .spaceSeparator: false
        default: !scalar.properties.isWhitespace
        }
    }
    return !name.isEmpty && name.utf8.count <= 128 && printable
}

extension ServerStore {
    /// Registers a device under a fresh random token and returns the token, which is shown once and never
    /// stored (only its hash is).
    public func registerDevice(
        id: String, role: DeviceRole = .handheld, at date: Date = Date()
    ) async throws(ServerError) -> String {
        // Printable characters only: the id goes into every log line and listing about the device.
        guard isAccountName(id) else {
            throw ServerError(
                code: .invalidInput,
                message: "A device id is 1 to 128 printable characters without spaces, not \"\(PrintableText(id))\".")
        }
        let token = try DeviceToken.generate()
        try await addDevice(id: id, tokenHash: DeviceToken.hash(token), role: role, at: date)
        return token
    }

    /// Builds a key bundle of every issuer key, numbered one above the last published, signs it with the
    /// anchor's private key and stores it for `GET /v1/keys`.
    ///
    /// - Returns: The bundle published.
    /// - Throws: `ServerError` with code `.invalidInput` when the anchor key cannot sign, `.conflict` when another
    ///   publish got the number first.
    @discardableResult
    public func publishBundle(signedBy anchorKey: PrivateKey, at date: Date = Date()) async throws(ServerError)
        -> KeyBundle
    {
        let keys = try await issuerKeys()
        let previous = try await latestBundle()?.sequence ?? 0
        // Whole seconds: the wire format carries no fractions, so the stored and sent dates agree.
        let issuedAt = Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down))
        let bundle = KeyBundle(sequence: previous + 1, issuedAt: issuedAt, keys: keys)
        let document: SignedDocument
        do {
            document = try SignedDocument.sign(bundle, with: anchorKey)
        } catch {
            throw ServerError(
                code: .invalidInput, message: "The anchor key cannot sign: \(error.message)", cause: error)
        }
        try await storeBundle(
            PublishedBundle(sequence: bundle.sequence, issuedAt: issuedAt, document: document.jsonBytes()))
        return bundle
    }
}
