import Foundation

/// Reads an `application/x-www-form-urlencoded` body, as the operator report's login form posts it (`token=…`).
///
/// Here, below the server, so that the fuzz package reaches the reader without the server's dependencies: the body
/// is the one the server takes from anyone, before any token is checked.
public enum FormBody {
    /// The value of the first field named `name` in `body`, `+` read as a space and percent escapes decoded; nil
    /// when there is no such field or its escapes are not UTF-8.
    public static func field(_ name: String, in body: String) -> String? {
        for pair in body.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let key = parts[0].replacingOccurrences(of: "+", with: " ").removingPercentEncoding
            guard key == name else { continue }
            let value = parts.count == 2 ? String(parts[1]) : ""
            return value.replacingOccurrences(of: "+", with: " ").removingPercentEncoding
        }
        return nil
    }
}
