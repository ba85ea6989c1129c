import FareCore
import Foundation

/// The operator report as HTML: the login form, and the report with its plots drawn on the server as inline SVG.
///
/// The page loads nothing but its own style sheet (`/report.css`) and runs no script: the filters are a GET form
/// and login and logout are POST forms, so it works with the strict policy `OperatorReportPage.securityPolicy` and
/// with a keyboard alone. Every text that comes from the data (device ids are chosen by admins and sent by
/// validators, verdict names are uploaded) goes through `escape`. Each plot is an `role="img"` SVG with a label
/// that says what it shows, followed by the same figures in a table for screen readers and for reading exact
/// values.
enum OperatorReportPage {
    /// The Content-Security-Policy of every page: nothing from elsewhere, no script at all, forms only to this server.
    static let securityPolicy =
        "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; "
        + "base-uri 'none'"

    /// The style sheet, embedded in the binary.
    static let styleSheet = PackageResources.report_css

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

    /// The document around `body`.
    private static func document(title: String, body: String) -> String {
        """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="referrer" content="same-origin">
        <title>\(escape(title))</title>
        <link rel="stylesheet" href="/report.css">
        </head>
        <body>
        \(body)
        </body>
        </html>

        """
    }

    // MARK: Login

    /// The login form, with `message` (a refusal) above it when there is one.
    static func login(message: String?) -> String {
        let alert = message.map { "<p class=\"alert\" id=\"login-error\" role=\"alert\">\(escape($0))</p>\n" } ?? ""
        return document(
            title: "Operator report · log in · farecheck",
            body: """
                <main class="login">
                <h1>Operator report</h1>
                <p>Log in with the operator token <code>farecheck-server operators add NAME</code> printed.</p>
                \(alert)<form id="login-form" method="post" action="/report/login">
                <label for="token">Operator token</label>
                <input id="token" name="token" type="password" autocomplete="current-password" required
                 spellcheck="false" autocapitalize="off" autofocus>
                <button type="submit">Log in</button>
                </form>
                </main>
                """)
    }

    /// A page that says what went wrong (a day that is not a date), with the way back.
    static func problem(_ message: String) -> String {
        document(
            title: "Operator report · farecheck",
            body: """
                <main>
                <h1>Operator report</h1>
                <p class="alert" role="alert">\(escape(message))</p>
                <p><a href="/report">Back to today's report</a></p>
                </main>
                """)
    }

    // MARK: The report

    /// The report of `report` for `operatorName`, with a filter listing `devices`.
    static func report(_ report: OperatorReport, operatorName: String, devices: [String]) -> String {
        var query = "day=\(percentEncode(report.day))"
        if let device = report.device { query += "&device=\(percentEncode(device))" }
        if report.timeZone != "UTC" { query += "&tz=\(percentEncode(report.timeZone))" }
        let zoneName = Self.zone(report)
        let scope = report.device.map { "device \($0)" } ?? "all devices"
        var sections = ""
        if report.isEmpty {
            sections = """
                <p class="empty" id="empty" role="status">No inspections on this day\
                \(report.device == nil ? "" : " from this device").</p>

                """
        } else {
            sections =
                summary(report) + hourSection(report) + deviceSection(report) + verdictSection(report)
                + decisionSection(report) + lagSection(report)
        }
        sections += withdrawalSection(report)
        let options =
            (["<option value=\"\"\(report.device == nil ? " selected" : "")>All devices</option>"]
            + devices.map { device in
                "<option value=\"\(escape(device))\"\(device == report.device ? " selected" : "")>\(escape(device))</option>"
            }).joined(separator: "\n")
        return document(
            title: "Operator report · \(report.day) · farecheck",
            body: """
                <header class="top">
                <h1>Operator report</h1>
                <form method="post" action="/report/logout" class="session">
                <span>Logged in as <strong id="operator">\(escape(operatorName))</strong></span>
                <button type="submit">Log out</button>
                </form>
                </header>
                <main>
                <form class="filter" method="get" action="/report" aria-label="Day, time zone and device">
                <label>Day <input type="date" name="day" value="\(escape(report.day))" required></label>
                <label>Time zone <select name="tz" id="tz">
                \(zoneOptions(selected: report.timeZone))
                </select></label>
                <label>Device <select name="device" id="device">
                \(options)
                </select></label>
                <button type="submit">Show</button>
                </form>
                <p class="scope" id="scope">\(escape(report.day)) (\(escape(zoneName))), \(escape(scope)): \
                <strong id="total">\(report.inspections)</strong> \(report.inspections == 1 ? "inspection" : "inspections").
                Download the figures as <a href="/report.csv?\(escape(query))" id="csv">CSV</a> or \
                <a href="/report.json?\(escape(query))" id="json">JSON</a>.</p>
                \(sections)</main>
                """)
    }

    private static func summary(_ report: OperatorReport) -> String {
        let items = report.decidedBy.map { count in
            "<div><dt>Decided \(label(count.decidedBy))</dt><dd>\(count.inspections) (\(percent(count.share)))</dd></div>"
        }
        return """
            <dl class="summary" id="summary">
            <div><dt>Inspections</dt><dd>\(report.inspections)</dd></div>
            <div><dt>Devices</dt><dd>\(report.perDevice.count)</dd></div>
            \(items.joined(separator: "\n"))
            </dl>

            """
    }

    /// 24 vertical bars, one per hour with inspections; the hours without any have no bar.
    private static func hourSection(_ report: OperatorReport) -> String {
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
            let x = left + Double(hour.hour) * slot + 1.5
            let label =
                "\(two(hour.hour)):00–\(two(hour.hour)):59: \(ReadableText.count(hour.inspections, "inspection"))"
            bars += """
                <rect class="bar" data-hour="\(hour.hour)" x="\(f(x))" y="\(f(top + plotHeight - barHeight))" \
                width="\(f(slot - 3))" height="\(f(barHeight))"><title>\(escape(label))</title></rect>

                """
        }
        var axis = ""
        for hour in stride(from: 0, to: 24, by: 3) {
            axis += """
                <text class="tick" x="\(f(left + (Double(hour) + 0.5) * slot))" y="\(f(height - 6))" \
                text-anchor="middle">\(two(hour))</text>

                """
        }
        axis += """
            <line class="axis" x1="\(f(left))" y1="\(f(top + plotHeight))" x2="\(f(width - 4))" y2="\(f(top + plotHeight))"/>
            <text class="tick" x="\(f(left - 6))" y="\(f(top + 8))" text-anchor="end">\(largest)</text>
            <text class="tick" x="\(f(left - 6))" y="\(f(top + plotHeight))" text-anchor="end">0</text>

            """
        let busiest = report.perHour.max { $0.inspections < $1.inspections }
        let description =
            "Inspections per hour (\(zone(report))) on \(report.day): \(report.perHour.count { $0.inspections > 0 }) hours with "
            + "inspections, the most (\(busiest?.inspections ?? 0)) from \(two(busiest?.hour ?? 0)):00."
        let rows = report.perHour.filter { $0.inspections > 0 }.map { hour in
            "<tr><th scope=\"row\">\(two(hour.hour)):00–\(two(hour.hour)):59</th><td>\(hour.inspections)</td></tr>"
        }
        return """
            <section aria-labelledby="hours-title" id="hours">
            <h2 id="hours-title">Inspections per hour (\(escape(zone(report))))</h2>
            <svg id="hours-plot" class="plot" viewBox="0 0 \(f(width)) \(f(height))" role="img" \
            aria-label="\(escape(description))">
            <title>\(escape(description))</title>
            \(bars)\(axis)</svg>
            \(table(caption: "Inspections per hour (\(zone(report))), hours with inspections", head: ["Hour", "Inspections"], rows: rows))
            </section>

            """
    }

    private static func deviceSection(_ report: OperatorReport) -> String {
        let bars = report.perDevice.map { (label: $0.device, value: Double($0.inspections), text: "\($0.inspections)") }
        let description =
            "Inspections per device on \(report.day): "
            + report.perDevice.map { "\($0.device) \($0.inspections)" }.joined(separator: ", ") + "."
        let rows = report.perDevice.map { device in
            "<tr><th scope=\"row\">\(escape(device.device))</th><td>\(device.inspections)</td><td>\(device.offline)"
                + "</td><td>\(device.online)</td><td>\(device.notStated)</td></tr>"
        }
        return """
            <section aria-labelledby="devices-title" id="devices">
            <h2 id="devices-title">Inspections per device</h2>
            \(horizontalBars(id: "devices-plot", description: description, bars: bars))
            \(table(caption: "Inspections per device, by who decided", head: ["Device", "Inspections", "Offline", "Online", "Not stated"], rows: rows))
            </section>

            """
    }

    private static func verdictSection(_ report: OperatorReport) -> String {
        let bars = report.verdicts.map {
            (label: $0.verdict.text, value: Double($0.inspections), text: "\($0.inspections)")
        }
        let description =
            "Verdicts on \(report.day): "
            + report.verdicts.map { "\($0.verdict.text) \($0.inspections)" }.joined(separator: ", ") + "."
        let rows = report.verdicts.map { verdict in
            "<tr><th scope=\"row\">\(escape(verdict.verdict.text))</th><td>\(verdict.inspections)</td></tr>"
        }
        return """
            <section aria-labelledby="verdicts-title" id="verdicts">
            <h2 id="verdicts-title">Verdicts</h2>
            \(horizontalBars(id: "verdicts-plot", description: description, bars: bars))
            \(table(caption: "Inspections per verdict", head: ["Verdict", "Inspections"], rows: rows))
            </section>

            """
    }

    /// One bar split into the three sides, each with its share written beside the legend (not told by colour alone).
    private static func decisionSection(_ report: OperatorReport) -> String {
        let width = 480.0
        var x = 0.0
        var parts = ""
        for count in report.decidedBy where count.inspections > 0 {
            let partWidth = width * Double(count.inspections) / Double(max(report.inspections, 1))
            parts += """
                <rect class="side side-\(count.decidedBy.rawValue)" x="\(f(x))" y="0" width="\(f(partWidth))" \
                height="32"><title>Decided \(label(count.decidedBy)): \(count.inspections) \
                (\(percent(count.share)))</title></rect>

                """
            x += partWidth
        }
        let description =
            "Who decided on \(report.day): "
            + report.decidedBy.map { "\(label($0.decidedBy)) \($0.inspections) (\(percent($0.share)))" }
            .joined(separator: ", ") + "."
        let legend = report.decidedBy.map { count in
            "<li><span class=\"swatch side-\(count.decidedBy.rawValue)\" aria-hidden=\"true\"></span>"
                + "\(label(count.decidedBy).prefix(1).uppercased() + label(count.decidedBy).dropFirst()): "
                + "\(count.inspections) (\(percent(count.share)))</li>"
        }
        return """
            <section aria-labelledby="decided-title" id="decided">
            <h2 id="decided-title">Decided offline or online</h2>
            <svg id="decided-plot" class="plot share" viewBox="0 0 \(f(width)) 32" role="img" \
            aria-label="\(escape(description))">
            <title>\(escape(description))</title>
            \(parts)</svg>
            <ul class="legend">\(legend.joined())</ul>
            </section>

            """
    }

    private static func lagSection(_ report: OperatorReport) -> String {
        let bars = report.syncLag.map {
            (
                label: $0.device, value: Double(max($0.p95Milliseconds, 0)),
                text: "p95 \(duration(milliseconds: $0.p95Milliseconds))"
            )
        }
        let description =
            "Upload lag per device on \(report.day), 95th percentile: "
            + report.syncLag.map { "\($0.device) \(duration(milliseconds: $0.p95Milliseconds))" }
            .joined(separator: ", ") + "."
        let rows = report.syncLag.map { lag in
            "<tr><th scope=\"row\">\(escape(lag.device))</th><td>\(duration(milliseconds: lag.p50Milliseconds))</td>"
                + "<td>\(duration(milliseconds: lag.p95Milliseconds))</td>"
                + "<td>\(duration(milliseconds: lag.maxMilliseconds))</td>"
                + "<td><time datetime=\"\(lag.lastUploadAt.formatted(.iso8601))\">"
                + "\(escape(clock(lag.lastUploadAt)))</time></td></tr>"
        }
        return """
            <section aria-labelledby="lag-title" id="lag">
            <h2 id="lag-title">Sync lag per device</h2>
            <p class="note">From the verdict (the validator's clock) to its arrival at the server.</p>
            \(horizontalBars(id: "lag-plot", description: description, bars: bars))
            \(table(caption: "Upload lag per device", head: ["Device", "Median", "95th percentile", "Longest", "Last upload (UTC)"], rows: rows))
            </section>

            """
    }

    // MARK: Drawing

    /// Horizontal bars with their labels (cut to 18 characters: the table below has the whole text) and values.
    private static func horizontalBars(
        id: String, description: String, bars: [(label: String, value: Double, text: String)]
    ) -> String {
        let width = 480.0
        let row = 26.0
        let labelWidth = 150.0
        let valueWidth = 96.0
        let height = row * Double(bars.count) + 4
        let largest = max(bars.map(\.value).max() ?? 1, 1)
        var body = ""
        for (index, bar) in bars.enumerated() {
            let y = 2 + row * Double(index)
            let barWidth = max(2, (width - labelWidth - valueWidth) * bar.value / largest)
            let shown = bar.label.count > 18 ? bar.label.prefix(17) + "…" : Substring(bar.label)
            body += """
                <text class="label" x="\(f(labelWidth - 6))" y="\(f(y + 17))" text-anchor="end">\(escape(shown))</text>
                <rect class="bar" x="\(f(labelWidth))" y="\(f(y + 3))" width="\(f(barWidth))" height="\(f(row - 8))">\
                <title>\(escape(bar.label)): \(escape(bar.text))</title></rect>
                <text class="value" x="\(f(labelWidth + barWidth + 6))" y="\(f(y + 17))">\(escape(bar.text))</text>

                """
        }
        return """
            <svg id="\(id)" class="plot" viewBox="0 0 \(f(width)) \(f(height))" role="img" \
            aria-label="\(escape(description))">
            <title>\(escape(description))</title>
            \(body)</svg>
            """
    }

    /// The audit: the first uses withdrawn on the day (none: no section).
    private static func withdrawalSection(_ report: OperatorReport) -> String {
        guard !report.withdrawals.isEmpty else { return "" }
        let rows = report.withdrawals.map { withdrawal in
            "<tr><th scope=\"row\">\(escape(withdrawal.issuer))/\(escape(withdrawal.ticketID))</th>"
                + "<td>\(escape(withdrawal.format))</td><td>\(escape(withdrawal.device))</td>"
                + "<td>\(clock(withdrawal.withdrawnAt))</td><td>\(escape(withdrawal.reason))</td></tr>"
        }
        return """
            <section aria-labelledby="withdrawals-title" id="withdrawals">
            <h2 id="withdrawals-title">First uses withdrawn</h2>
            <p>Claims the server no longer stands by: gates forget them with their next sync, and the ticket passes \
            again.</p>
            \(table(caption: "First uses withdrawn on \(report.day)", head: ["Ticket", "Format", "Claimed by", "Withdrawn", "Why"], rows: rows))
            </section>

            """
    }

    private static func table(caption: String, head: [String], rows: [String]) -> String {
        let header = head.map { "<th scope=\"col\">\(escape($0))</th>" }.joined()
        // On a phone a wide table scrolls sideways in its box: the box takes the keyboard's focus (arrow keys
        // scroll it) and is named by the table's caption for screen readers.
        return """
            <div class="table-wrap" tabindex="0" role="region" aria-label="\(escape(caption))"><table>
            <caption>\(escape(caption))</caption>
            <thead><tr>\(header)</tr></thead>
            <tbody>
            \(rows.joined(separator: "\n"))
            </tbody>
            </table></div>
            """
    }

    // MARK: Words and numbers

    /// The report's time zone as the page names it: `UTC`, `UTC+02:00`.
    private static func zone(_ report: OperatorReport) -> String {
        report.timeZone == "UTC" ? "UTC" : "UTC\(report.timeZone)"
    }

    /// The offsets the filter offers, every half hour from −12:00 to +14:00 and the quarter hours in use
    /// (+05:45, +08:45, +12:45), with `selected` chosen (added when it is another).
    private static func zoneOptions(selected: String) -> String {
        var offsets =
            Array(stride(from: -12 * 60, through: 14 * 60, by: 30)) + [5 * 60 + 45, 8 * 60 + 45, 12 * 60 + 45]
        if let chosen = ReportOffset(text: selected), !offsets.contains(chosen.minutes) {
            offsets.append(chosen.minutes)
        }
        return offsets.sorted().compactMap { minutes in
            let offset = minutes == 0 ? ReportOffset.utc : ReportOffset(text: Self.offsetText(minutes))
            guard let offset else { return nil }
            let name = offset.description
            let shown = name == "UTC" ? "UTC" : "UTC\(name)"
            return "<option value=\"\(escape(name))\"\(name == selected ? " selected" : "")>\(escape(shown))</option>"
        }.joined(separator: "\n")
    }

    private static func offsetText(_ minutes: Int) -> String {
        (minutes < 0 ? "-" : "+") + two(abs(minutes) / 60) + ":" + two(abs(minutes) % 60)
    }

    /// How a side is named in sentences.
    static func label(_ side: DecisionSide) -> String {
        switch side {
        case .offline: "offline"
        case .online: "online"
        case .unstated: "not stated"
        }
    }

    /// A lag as a person reads it (`ReadableText.duration`); negative when the validator's clock ran ahead of the
    /// server's.
    static func duration(milliseconds: Int64) -> String { ReadableText.duration(milliseconds: milliseconds) }

    private static func percent(_ share: Double) -> String {
        String(format: "%.1f %%", share * 100)
    }

    private static func two(_ number: Int) -> String {
        number < 10 ? "0\(number)" : "\(number)"
    }

    /// `2026-03-14 18:05:09`, UTC.
    private static func clock(_ date: Date) -> String {
        let text = date.formatted(.iso8601)
        return String(text.prefix(19)).replacingOccurrences(of: "T", with: " ")
    }

    /// A coordinate with at most one decimal.
    private static func f(_ value: Double) -> String {
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
