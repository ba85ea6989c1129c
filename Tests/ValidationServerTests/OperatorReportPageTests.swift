import Foundation
import Testing

@testable import ValidationServer

/// The report page as `report.html`'s fragments filled in (Sources/ValidationServer/Resources): what comes from the
/// data is shown as it is, never read as part of the page.
@Suite("The operator report page")
struct OperatorReportPageTests {
    @Test("a device id or operator name written like a placeholder of report.html shows as itself")
    func placeholderLikeText() {
        var report = ReportFleet.expectedDay
        report.perDevice[1].device = "{{rows}}"
        report.syncLag[1].device = "{{table}}"
        let page = OperatorReportPage().report(report, operatorName: "{{sections}}", devices: ["{{device-options}}"])

        #expect(page.contains("Logged in as <strong id=\"operator\">{{sections}}</strong>"))
        #expect(page.contains("<option value=\"{{device-options}}\">{{device-options}}</option>"))
        #expect(page.contains("<tr><th scope=\"row\">{{rows}}</th><td>3</td><td>2</td><td>0</td><td>1</td></tr>"))
        #expect(page.contains("<tr><th scope=\"row\">{{table}}</th><td>1 h 45 min</td>"))
        // The page keeps its own sections and tables, one of each per figure.
        #expect(page.components(separatedBy: "<section ").count - 1 == 5)
        #expect(page.components(separatedBy: "<table>").count - 1 == 4)
    }

    @Test("an empty day says whether it is the fleet's or one device's, and still lists the first uses withdrawn")
    func emptyDay() {
        var report = OperatorReport(
            day: "2026-03-16", timeZone: "UTC", device: "tram-7", inspections: 0, perHour: ReportFleet.hours([:]),
            perDevice: [], verdicts: [], decidedBy: [], syncLag: [])
        report.withdrawals = [
            .init(
                device: "gate-<3>", format: "fc1", issuer: "demo-transit", ticketID: "0a01",
                withdrawnAt: ReportFleet.date("2026-03-16T10:11:12Z"), reason: "device gate-<3> revoked")
        ]
        let page = OperatorReportPage().report(report, operatorName: "alex@agency", devices: ["tram-7"])
        #expect(page.contains(">No inspections on this day from this device.</p>"))
        #expect(!page.contains("<section aria-labelledby=\"hours-title\""))
        #expect(page.contains("<h2 id=\"withdrawals-title\">First uses withdrawn</h2>"))
        #expect(
            page.contains(
                "<tr><th scope=\"row\">demo-transit/0a01</th><td>fc1</td><td>gate-&lt;3&gt;</td>"
                    + "<td>2026-03-16 10:11:12</td><td>device gate-&lt;3&gt; revoked</td></tr>"))

        report.device = nil
        report.withdrawals = []
        let fleet = OperatorReportPage().report(report, operatorName: "alex@agency", devices: ["tram-7"])
        #expect(fleet.contains(">No inspections on this day.</p>"))
        #expect(!fleet.contains("withdrawals-title"))
    }
}
