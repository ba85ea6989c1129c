import FareCore
import Foundation
import Presentation

/// The operator report as HTML: the login form, and the report with its plots drawn on the server as inline SVG.
///
/// The page loads nothing but its own style sheet (`/report.css`) and runs no script: the filters are a GET form
/// and login and logout are POST forms, so it works with the strict policy `OperatorReportPage.securityPolicy` and
/// with a keyboard alone. Each plot is an `role="img"` SVG with a label that says what it shows, followed by the
/// same figures in a table for screen readers and for reading exact values.
///
/// The markup and its fixed words are a resource file, `Resources/report.html`, in fragments with named
/// placeholders (`ReportTemplate`); the style sheet is `Resources/report.css`. Both are embedded in the program
/// when it is built. This type computes what goes into the placeholders: the figures, the plots' coordinates, and
/// the words that depend on the data (a count's noun, a side's name, the lists in the plots' labels). Every text
/// that comes from the data (device ids are chosen by admins and sent by validators, verdict names are uploaded)
/// is escaped where it goes in (`ReportTemplate.Filling.text`).
struct OperatorReportPage: Sendable {
    /// The words of the page, in the operator's language.
    var words = ReportWords.english
    /// The languages the switch offers, by their own names.
    var languages: [LanguageCatalog] = LanguageCatalog.builtIn

    /// The Content-Security-Policy of every page: nothing from elsewhere, no script at all, forms only to this server.
    static let securityPolicy =
        "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; "
        + "base-uri 'none'"

    /// The style sheet, embedded in the binary.
    static let styleSheet = PackageResources.report_css

    /// The markup's fragments, embedded in the binary.
    static let template = ReportTemplate(String(decoding: PackageResources.report_html, as: UTF8.self))

    /// Text made safe inside HTML (and SVG) text and quoted attribute values.
    static func escape(_ text: some StringProtocol) -> String {
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.append(character)
            }
        }
        return escaped
    }

    /// The fragment `name` of the template, filled in.
    private func fill(_ name: String, _ values: [String: ReportTemplate.Filling] = [:]) -> String {
        Self.template.fill(name, values, words: words)
    }

    /// The document with the title `title` (a fragment filled in) around `body`.
    private func document(title: String, body: String) -> String {
        fill("document", ["lang": "\(words.language)", "title": .markup(title), "body": .markup(body)])
    }

    // MARK: Login

    /// The login form, with `message` (a refusal) above it when there is one.
    func login(message: String?) -> String {
        let alert = message.map { fill("login-alert", ["message": "\($0)"]) } ?? ""
        return document(title: fill("login-title"), body: fill("login", ["alert": .markup(alert)]))
    }

    /// A page that says what went wrong (a day that is not a date), with the way back.
    func problem(_ message: String) -> String {
        document(title: fill("problem-title"), body: fill("problem", ["message": "\(message)"]))
    }

    /// A page that says what went wrong in English (the API's own sentence), marked as English.
    func problem(english message: String) -> String {
        guard words.language.language != "en" else { return problem(message) }
        return document(
            title: fill("problem-title"),
            body: fill("problem", ["message": .markup(fill("in-english", ["text": "\(message)"]))]))
    }

    // MARK: The report

    /// The report of `report` for `operatorName`, with a filter listing `devices`.
    func report(
        _ report: OperatorReport, operatorName: String, devices: [String], trust: [TrustSourceRow] = []
    ) -> String {
        var query = "day=\(Self.percentEncode(report.day))"
        if let device = report.device { query += "&device=\(Self.percentEncode(device))" }
        if report.timeZone != "UTC" { query += "&tz=\(Self.percentEncode(report.timeZone))" }
        var sections = ""
        if report.isEmpty {
            sections = fill(report.device == nil ? "empty" : "empty-device")
        } else {
            sections =
                summary(report) + hourSection(report) + deviceSection(report) + verdictSection(report)
                + decisionSection(report) + lagSection(report)
        }
        sections += withdrawalSection(report) + trustSection(trust)
        let options =
            ([option(value: "", text: .markup(fill("all-devices-option")), selected: report.device == nil)]
            + devices.map { option(value: $0, text: "\($0)", selected: $0 == report.device) })
            .joined(separator: "\n")
        let scope = report.device.map { fill("scope-device", ["device": "\($0)"]) } ?? fill("scope-all-devices")
        let scopeLine = words.html(
            report.inspections == 1 ? "scopeOne" : "scopeOther",
            [
                OperatorReportPage.escape(report.day), OperatorReportPage.escape(zone(report)), scope,
                fill("total", ["total": "\(report.inspections)"]),
            ])
        return document(
            title: fill("report-title", ["day": "\(report.day)"]),
            body: fill(
                "report",
                [
                    "operator": "\(operatorName)", "day": "\(report.day)",
                    "zone-options": .markup(zoneOptions(selected: report.timeZone)), "device-options": .markup(options),
                    "language-options": .markup(languageOptions()), "scope-line": .markup(scopeLine),
                    "query": "\(query)", "sections": .markup(sections),
                ]))
    }

    /// The languages the report speaks, each by its own name and marked as in that language, the page's chosen.
    private func languageOptions() -> String {
        languages.map { catalog in
            let tag = catalog.about.language
            return fill(
                tag == words.language ? "language-option-selected" : "language-option",
                ["value": "\(tag)", "text": "\(catalog.about.name)"])
        }.joined(separator: "\n")
    }

    /// An option of a filter's list.
    private func option(value: String, text: ReportTemplate.Filling, selected: Bool) -> String {
        fill(selected ? "option-selected" : "option", ["value": "\(value)", "text": text])
    }

    private func summary(_ report: OperatorReport) -> String {
        let items = report.decidedBy.map { count in
            fill(
                "summary-decided",
                [
                    "side": "\(label(count.decidedBy))", "inspections": "\(count.inspections)",
                    "share": "\(percent(count.share))",
                ])
        }
        return fill(
            "summary",
            [
                "inspections": "\(report.inspections)", "devices": "\(report.perDevice.count)",
                "decided": .markup(items.joined(separator: "\n")),
            ])
    }

    /// 24 vertical bars, one per hour with inspections; the hours without any have no bar.
    private func hourSection(_ report: OperatorReport) -> String {
        let width = 480.0
        let height = 200.0
        let left = 34.0
        let bottom = 24.0
        let top = 10.0
        let largest = max(1, report.perHour.map(\.inspections).max() ?? 1)
        let slot = (width - left - 4) / 24
        let plotHeight = height - bottom - top
        var bars = ""
        for hour in report.perHour where hour.inspections > 0 {
            let barHeight = plotHeight * Double(hour.inspections) / Double(largest)
            bars += fill(
                "hour-bar",
                [
                    "hour": "\(hour.hour)", "x": "\(f(left + Double(hour.hour) * slot + 1.5))",
                    "y": "\(f(top + plotHeight - barHeight))", "width": "\(f(slot - 3))", "height": "\(f(barHeight))",
                    "from": "\(two(hour.hour))", "inspections": "\(words.count(hour.inspections, "inspection"))",
                ])
        }
        var axis = ""
        for hour in stride(from: 0, to: 24, by: 3) {
            axis += fill(
                "hour-tick",
                ["x": "\(f(left + (Double(hour) + 0.5) * slot))", "y": "\(f(height - 6))", "hour": "\(two(hour))"])
        }
        axis += fill(
            "hour-axis",
            [
                "left": "\(f(left))", "right": "\(f(width - 4))", "axis-y": "\(f(top + plotHeight))",
                "tick-x": "\(f(left - 6))", "largest-y": "\(f(top + 8))", "largest": "\(largest)",
            ])
        let busiest = report.perHour.max { $0.inspections < $1.inspections }
        let description = fill(
            "hours-description",
            [
                "zone": "\(zone(report))", "day": "\(report.day)",
                "hours": "\(report.perHour.count { $0.inspections > 0 })", "most": "\(busiest?.inspections ?? 0)",
                "busiest": "\(two(busiest?.hour ?? 0))",
            ])
        let rows = report.perHour.filter { $0.inspections > 0 }.map { hour in
            fill("hour-row", ["from": "\(two(hour.hour))", "inspections": "\(hour.inspections)"])
        }
        let plotted = plot(
            id: "hours-plot", width: width, height: height, description: description, drawing: bars + axis)
        return fill(
            "hours",
            [
                "zone": "\(zone(report))", "plot": .markup(plotted),
                "table": .markup(table("hours", ["zone": "\(zone(report))"], rows: rows)),
            ])
    }

    private func deviceSection(_ report: OperatorReport) -> String {
        let bars = report.perDevice.map { (label: $0.device, value: Double($0.inspections), text: "\($0.inspections)") }
        let description = fill(
            "devices-description",
            [
                "day": "\(report.day)",
                "devices": "\(report.perDevice.map { "\($0.device) \($0.inspections)" }.joined(separator: ", "))",
            ])
        let rows = report.perDevice.map { device in
            fill(
                "device-row",
                [
                    "device": "\(device.device)", "inspections": "\(device.inspections)",
                    "offline": "\(device.offline)", "online": "\(device.online)", "not-stated": "\(device.notStated)",
                ])
        }
        return fill(
            "devices",
            [
                "plot": .markup(horizontalBars(id: "devices-plot", description: description, bars: bars)),
                "table": .markup(table("devices", rows: rows)),
            ])
    }

    private func verdictSection(_ report: OperatorReport) -> String {
        let bars = report.verdicts.map {
            (label: words.verdict($0.verdict), value: Double($0.inspections), text: "\($0.inspections)")
        }
        let description = fill(
            "verdicts-description",
            [
                "day": "\(report.day)",
                "verdicts":
                    "\(report.verdicts.map { "\(words.verdict($0.verdict)) \($0.inspections)" }.joined(separator: ", "))",
            ])
        let rows = report.verdicts.map { verdict in
            fill(
                "verdict-row",
                ["verdict": "\(words.verdict(verdict.verdict))", "inspections": "\(verdict.inspections)"])
        }
        return fill(
            "verdicts",
            [
                "plot": .markup(horizontalBars(id: "verdicts-plot", description: description, bars: bars)),
                "table": .markup(table("verdicts", rows: rows)),
            ])
    }

    /// One bar split into the three sides, each with its share written beside the legend (not told by colour alone).
    private func decisionSection(_ report: OperatorReport) -> String {
        let width = 480.0
        var x = 0.0
        var parts = ""
        for count in report.decidedBy where count.inspections > 0 {
            let partWidth = width * Double(count.inspections) / Double(max(report.inspections, 1))
            parts += fill(
                "decided-part",
                [
                    "side": "\(count.decidedBy.rawValue)", "x": "\(f(x))", "width": "\(f(partWidth))",
                    "label": "\(label(count.decidedBy))", "inspections": "\(count.inspections)",
                    "share": "\(percent(count.share))",
                ])
            x += partWidth
        }
        let sides = report.decidedBy.map { "\(label($0.decidedBy)) \($0.inspections) (\(percent($0.share)))" }
        let description = fill(
            "decided-description", ["day": "\(report.day)", "sides": "\(sides.joined(separator: ", "))"])
        let legend = report.decidedBy.map { count in
            fill(
                "decided-legend",
                [
                    "side": "\(count.decidedBy.rawValue)",
                    "label": "\(label(count.decidedBy).prefix(1).uppercased() + label(count.decidedBy).dropFirst())",
                    "inspections": "\(count.inspections)", "share": "\(percent(count.share))",
                ])
        }
        return fill(
            "decided",
            [
                "plot": .markup(
                    plot(
                        id: "decided-plot", class: "plot share", width: width, height: 32, description: description,
                        drawing: parts)),
                "legend": .markup(legend.joined()),
            ])
    }

    private func lagSection(_ report: OperatorReport) -> String {
        let bars = report.syncLag.map {
            (
                label: $0.device, value: Double(max($0.p95Milliseconds, 0)),
                text: "p95 \(Self.duration(milliseconds: $0.p95Milliseconds))"
            )
        }
        let lags = report.syncLag.map { "\($0.device) \(Self.duration(milliseconds: $0.p95Milliseconds))" }
        let description = fill(
            "lag-description", ["day": "\(report.day)", "devices": "\(lags.joined(separator: ", "))"])
        let rows = report.syncLag.map { lag in
            fill(
                "lag-row",
                [
                    "device": "\(lag.device)", "median": "\(Self.duration(milliseconds: lag.p50Milliseconds))",
                    "p95": "\(Self.duration(milliseconds: lag.p95Milliseconds))",
                    "longest": "\(Self.duration(milliseconds: lag.maxMilliseconds))",
                    "last-upload": "\(lag.lastUploadAt.formatted(.iso8601))",
                    "last-upload-clock": "\(clock(lag.lastUploadAt))",
                ])
        }
        return fill(
            "lag",
            [
                "plot": .markup(horizontalBars(id: "lag-plot", description: description, bars: bars)),
                "table": .markup(table("lag", rows: rows)),
            ])
    }

    /// The audit: the first uses withdrawn on the day (none: no section).
    private func withdrawalSection(_ report: OperatorReport) -> String {
        guard !report.withdrawals.isEmpty else { return "" }
        let rows = report.withdrawals.map { withdrawal in
            fill(
                "withdrawal-row",
                [
                    "issuer": "\(withdrawal.issuer)", "ticket": "\(withdrawal.ticketID)",
                    "format": "\(withdrawal.format)", "device": "\(withdrawal.device)",
                    "withdrawn": "\(clock(withdrawal.withdrawnAt))", "reason": "\(withdrawal.reason)",
                ])
        }
        return fill(
            "withdrawals", ["table": .markup(table("withdrawals", ["day": "\(report.day)"], rows: rows))])
    }

    /// The publishers the server follows (none configured: no section): each one's version, last success and age,
    /// the age marked stale (in words and in red) past its limit, and why the last attempt failed.
    private func trustSection(_ sources: [TrustSourceRow]) -> String {
        guard !sources.isEmpty else { return "" }
        let rows = sources.map { source in
            let age = source.age.map { ReadableText.duration(milliseconds: Int64($0 * 1000)) } ?? words.text("never")
            let limit = ReadableText.duration(milliseconds: source.limit.components.seconds * 1000)
            return fill(
                source.stale ? "trust-row-stale" : "trust-row",
                [
                    "name": "\(source.name)", "kind": "\(source.state?.kind ?? "")",
                    "version": "\(source.state?.version ?? words.text("none"))",
                    "success": "\(source.state?.lastSuccess.map { $0.formatted(.iso8601) } ?? words.text("never"))",
                    "age": "\(age)", "limit": "\(limit)",
                    "error": "\(source.state?.lastError ?? "")",
                ])
        }
        return fill("trust-sources", ["table": .markup(table("trust", rows: rows))])
    }

    // MARK: Drawing

    /// A plot: `drawing` (fragments filled in) in an SVG image labelled with `description` (a fragment filled in).
    private func plot(
        id: String, class classes: String = "plot", width: Double, height: Double, description: String,
        drawing: String
    ) -> String {
        fill(
            "plot",
            [
                "id": "\(id)", "class": "\(classes)", "width": "\(f(width))", "height": "\(f(height))",
                "description": .markup(description), "drawing": .markup(drawing),
            ])
    }

    /// Horizontal bars with their labels (cut to 18 characters: the table below has the whole text) and values.
    private func horizontalBars(
        id: String, description: String, bars: [(label: String, value: Double, text: String)]
    ) -> String {
        let width = 480.0
        let row = 26.0
        let labelWidth = 150.0
        let valueWidth = 96.0
        let largest = max(bars.map(\.value).max() ?? 1, 1)
        var drawing = ""
        for (index, bar) in bars.enumerated() {
            let y = 2 + row * Double(index)
            let barWidth = max(2, (width - labelWidth - valueWidth) * bar.value / largest)
            let shown = bar.label.count > 18 ? bar.label.prefix(17) + "…" : Substring(bar.label)
            drawing += fill(
                "bar",
                [
                    "label-x": "\(f(labelWidth - 6))", "text-y": "\(f(y + 17))", "label": "\(shown)",
                    "x": "\(f(labelWidth))", "y": "\(f(y + 3))", "width": "\(f(barWidth))", "height": "\(f(row - 8))",
                    "whole-label": "\(bar.label)", "value": "\(bar.text)", "value-x": "\(f(labelWidth + barWidth + 6))",
                ])
        }
        return plot(
            id: id, width: width, height: row * Double(bars.count) + 4, description: description, drawing: drawing)
    }

    /// The table of the section `section`: its caption (`SECTION-caption`, filled in from `caption`), its head
    /// (`SECTION-head`) and `rows` (fragments filled in).
    private func table(
        _ section: String, _ caption: [String: ReportTemplate.Filling] = [:], rows: [String]
    ) -> String {
        fill(
            "table",
            [
                "caption": .markup(fill("\(section)-caption", caption)), "head": .markup(fill("\(section)-head")),
                "rows": .markup(rows.joined(separator: "\n")),
            ])
    }

    // MARK: Words and numbers

    /// The report's time zone as the page names it: `UTC`, `UTC+02:00`.
    private func zone(_ report: OperatorReport) -> String {
        report.timeZone == "UTC" ? "UTC" : "UTC\(report.timeZone)"
    }

    /// The offsets the filter offers, every half hour from −12:00 to +14:00 and the quarter hours in use
    /// (+05:45, +08:45, +12:45), with `selected` chosen (added when it is another).
    private func zoneOptions(selected: String) -> String {
        var offsets =
            Array(stride(from: -12 * 60, through: 14 * 60, by: 30)) + [5 * 60 + 45, 8 * 60 + 45, 12 * 60 + 45]
        if let chosen = ReportOffset(text: selected), !offsets.contains(chosen.minutes) {
            offsets.append(chosen.minutes)
        }
        return offsets.sorted().compactMap { minutes in
            let offset = minutes == 0 ? ReportOffset.utc : ReportOffset(text: offsetText(minutes))
            guard let offset else { return nil }
            let name = offset.description
            return option(value: name, text: "\(name == "UTC" ? "UTC" : "UTC\(name)")", selected: name == selected)
        }.joined(separator: "\n")
    }

    private func offsetText(_ minutes: Int) -> String {
        (minutes < 0 ? "-" : "+") + two(abs(minutes) / 60) + ":" + two(abs(minutes) % 60)
    }

    /// How a side is named in sentences.
    func label(_ side: DecisionSide) -> String {
        switch side {
        case .offline: words.text("sideOffline")
        case .online: words.text("sideOnline")
        case .unstated: words.text("sideUnstated")
        }
    }

    /// A lag as a person reads it (`ReadableText.duration`); negative when the validator's clock ran ahead of the
    /// server's.
    static func duration(milliseconds: Int64) -> String { ReadableText.duration(milliseconds: milliseconds) }

    private func percent(_ share: Double) -> String { words.percent(share) }

    private func two(_ number: Int) -> String {
        number < 10 ? "0\(number)" : "\(number)"
    }

    /// `2026-03-14 18:05:09`, UTC.
    private func clock(_ date: Date) -> String {
        let text = date.formatted(.iso8601)
        return String(text.prefix(19)).replacingOccurrences(of: "T", with: " ")
    }

    /// A coordinate with at most one decimal.
    private func f(_ value: Double) -> String {
        let rounded = (value * 10).rounded() / 10
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
    }

    /// A query parameter's value, percent-encoded (everything but unreserved characters).
    static func percentEncode(_ text: String) -> String {
        let allowed = CharacterSet(
            charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }
}
