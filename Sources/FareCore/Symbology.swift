/// The kind of 2D (or linear) symbol a payload was read from.
///
/// Raw values are the stable names used in JSON output and the journal.
public enum Symbology: String, Sendable, Codable, CaseIterable {
    case qr = "qr"
    case microQR = "micro-qr"
    case aztec = "aztec"
    case aztecRune = "aztec-rune"
    case dataMatrix = "data-matrix"
    case pdf417 = "pdf417"
    case other = "other"
}
