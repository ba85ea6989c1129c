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
        let page = OperatorReportPage.report(report, operatorName: "{{sections}}", devices: ["{{device-options}}"])

        #expect(page.contains("Logged in as <strong id=\"operator\">{{sections}}</strong>"))
        #expect(page.contains("<option value=\"{{device-options}}\">{{device-options}}</option>"))
        #expect(page.contains("<tr><th scope=\"row\">{{rows}}</th><td>3</td><td>2</td><td>0</td><td>1</td></tr>"))
        #expect(page.contains("<tr><th scope=\"row\">{{table}}</th><td>1 h 45 min</td>"))
        // The page keeps its own sections and tables, one of each per figure.
        #expect(page.components(separatedBy: "<section ").count - 1 == 5)
        #expect(page.components(separatedBy: "<table>").count - 1 == 4)
    }
}
