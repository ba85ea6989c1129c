import Foundation

/// The operator report as one CSV table (RFC 4180), for a spreadsheet.
///
/// The report holds figures of different shapes (hours, devices, verdicts, lags); rather than several files, they
/// are written long: one row per figure, `day,figure,subject,measure,value`, e.g.
/// `2026-03-14,hour,07,inspections,12` (the hours of the day in the report's time zone, whose offset from UTC is
/// the row `time-zone,offset,minutes`) or `2026-03-14,sync-lag,tram-7,p95-ms,5400`, which a pivot table turns back
/// into any shape. Lines end in CRLF, fields with a comma, quote or line break are quoted, and a field that a
/// spreadsheet would run as a formula is written with a `'` in front (device ids are text from validators): one
/// starting with tab or carriage return, or whose first character after any leading whitespace, control characters
/// and zero-width characters is `=`, `+`, `-`, `@` or a full-width look-alike (`＝` `＋` `－` `＠`, which some
/// spreadsheets read as the ASCII ones). A negative integer (a lag, when a validator's clock ran ahead) is a
/// number, not a formula, and is left as it is.
enum OperatorReportCSV {
    /// The header row's fields.
    static let header = ["day", "figure", "subject", "measure", "value"]

    /// The whole table.
    static func table(_ report: OperatorReport) -> String {
        var rows: [[String]] = [header]
        func add(_ figure: String, _ subject: String, _ measure: String, _ value: String) {
            rows.append([report.day, figure, subject, measure, value])
        }
        add("time-zone", "offset", "minutes", "\(ReportOffset(text: report.timeZone)?.minutes ?? 0)")
        add("total", report.device ?? "all", "inspections", "\(report.inspections)")
        for hour in report.perHour {
            add("hour", hour.hour < 10 ? "0\(hour.hour)" : "\(hour.hour)", "inspections", "\(hour.inspections)")
        }
        for device in report.perDevice {
            add("device", device.device, "inspections", "\(device.inspections)")
            add("device", device.device, "offline", "\(device.offline)")
            add("device", device.device, "online", "\(device.online)")
            add("device", device.device, "not-stated", "\(device.notStated)")
        }
        for verdict in report.verdicts {
            add("verdict", verdict.verdict.text, "inspections", "\(verdict.inspections)")
        }
        for side in report.decidedBy {
            add("decided-by", side.decidedBy.rawValue, "inspections", "\(side.inspections)")
            add("decided-by", side.decidedBy.rawValue, "share", String(format: "%.4f", side.share))
        }
        for lag in report.syncLag {
            add("sync-lag", lag.device, "p50-ms", "\(lag.p50Milliseconds)")
            add("sync-lag", lag.device, "p95-ms", "\(lag.p95Milliseconds)")
            add("sync-lag", lag.device, "max-ms", "\(lag.maxMilliseconds)")
            add("sync-lag", lag.device, "last-upload", lag.lastUploadAt.formatted(.iso8601))
        }
        return rows.map { $0.map(field).joined(separator: ",") + "\r\n" }.joined()
    }

    /// One field, defused and quoted as needed.
    static func field(_ text: String) -> String {
        var text = text
        if isFormula(text) { text = "'" + text }
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// The characters that start a formula, ASCII and full-width (U+FF1D, U+FF0B, U+FF0D, U+FF20).
    private static let formulaStarters: Set<Unicode.Scalar> = [
        "=", "+", "-", "@", "\u{FF1D}", "\u{FF0B}", "\u{FF0D}", "\u{FF20}",
    ]

    /// Whether a spreadsheet could run `text` as a formula: it starts with tab or carriage return, or with a
    /// formula starter once what a spreadsheet skips or cannot show is stripped from its front (whitespace, line
    /// breaks, control characters, zero-width and other format characters). `-1200`, a number, is not one.
    static func isFormula(_ text: String) -> Bool {
        let scalars = text.unicodeScalars
        guard let first = scalars.first else { return false }
        if first == "\t" || first == "\r" { return true }
        let negativeInteger =
            first == "-" && scalars.count > 1 && scalars.dropFirst().allSatisfy { ("0"..."9").contains($0) }
        if negativeInteger { return false }
        let start = scalars.first { scalar in
            !(scalar.properties.isWhitespace || scalar.properties.generalCategory == .control
                || scalar.properties.generalCategory == .format)
        }
        return start.map(formulaStarters.contains) ?? false
    }
}
