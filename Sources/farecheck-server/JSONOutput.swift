import FareCore
import Foundation

/// One JSON object on one line, keys sorted, safe on a terminal (`terminalSafeJSON`). Its field names are spelled
/// as every output of farecheck spells them (issue 52): an id is `…Id` (`keyId`, `ticketId`, `deviceId`), also
/// where the API's wire format, which stays as it is, writes `keyID`.
func jsonLine(_ object: [String: Any]) -> String {
    guard
        let data = try? JSONSerialization.data(
            withJSONObject: outputSpelling(object), options: [.sortedKeys, .withoutEscapingSlashes])
    else { return "{}" }
    return terminalSafeJSON(String(decoding: data, as: UTF8.self))
}

/// What a list command prints with `--json`: one JSON array of its records, `[]` when there are none (issue 52).
/// Records are appended as they are read and printed together by `finish()`.
final class JSONList {
    private var records: [Any] = []

    func append(_ record: [String: Any]) { records.append(outputSpelling(record)) }

    /// Prints the array on standard output.
    func finish() {
        guard
            let data = try? JSONSerialization.data(
                withJSONObject: records, options: [.sortedKeys, .withoutEscapingSlashes])
        else { return say("[]") }
        say(terminalSafeJSON(String(decoding: data, as: UTF8.self)))
    }
}

/// `value` with every field name ending in `ID` spelled `…Id`, at every depth, and every identifier as the text
/// it is on the wire (`JSONSerialization` knows only Foundation's types: one identifier would empty the output).
func outputSpelling(_ value: Any) -> Any {
    if let identifier = value as? any TextIdentifier { return identifier.rawValue }
    if let ticketID = value as? TicketID { return ticketID.hexString }
    if let object = value as? [String: Any] {
        var renamed: [String: Any] = [:]
        for (key, field) in object {
            let name = key.count > 2 && key.hasSuffix("ID") ? String(key.dropLast(2)) + "Id" : key
            renamed[name] = outputSpelling(field)
        }
        return renamed
    }
    if let array = value as? [Any] { return array.map(outputSpelling) }
    return value
}
