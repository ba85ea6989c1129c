import Foundation
import Signatures

/// A validator's secret bearer token, and the hash under which the server keeps it.
///
/// The server stores only SHA-256 of the token: a stolen database lets nobody call the API as a device.
public enum DeviceToken {
    /// A fresh token: 32 random bytes as base64url without padding (43 characters).
    public static func generate() throws(ServerError) -> String {
        let bytes: [UInt8]
        do {
            bytes = try PINHash.randomBytes(32)
        } catch {
            throw ServerError(code: .storageFailure, message: "The random number generator failed.", cause: error)
        }
        return Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// SHA-256 of the token's UTF-8 bytes, as stored.
    public static func hash(_ token: String) -> [UInt8] {
        digest(.sha256, Array(token.utf8))
    }
}
