/// The operator report's markup as named fragments with `{{name}}` placeholders (`Resources/report.html`), filled in
/// by `OperatorReportPage`.
///
/// A fragment is the text inside a `<template id="NAME">` element of the file, less the line break right after the
/// opening tag (as HTML drops the one after `<pre>`). A placeholder is filled in one pass, so a value that holds
/// `{{…}}` (a device id may) stays text. A fragment asked for that the file does not have, a placeholder left
/// empty or a value with no placeholder is a mismatch between the file and the code, and stops the program: the
/// tests that render the page find it.
///
/// `{{t:ID}}` is an entry of the report's language (`ReportWords`); `{{t:ID a @b}}` fills the entry's `{0}` with the
/// value `a` and its `{1}` with the fragment `b`, filled in from the same values. The entry's own text is escaped.
struct ReportTemplate: Sendable {
    /// What goes into a placeholder: text from the data, escaped for HTML, or a fragment already filled in.
    enum Filling: ExpressibleByStringInterpolation, Sendable {
        /// Text, escaped (`OperatorReportPage.escape`) where it goes.
        case text(String)
        /// Markup made of filled-in fragments, put in as it is.
        case markup(String)

        init(stringLiteral value: String) { self = .text(value) }

        /// The HTML that stands in the placeholder.
        var html: String {
            switch self {
            case .text(let text): OperatorReportPage.escape(text)
            case .markup(let markup): markup
            }
        }
    }

    /// The fragments by name.
    let fragments: [String: String]

    /// The fragments of `file`, a document of `<template id="NAME">` elements (anything between them is a comment
    /// for the people who edit it).
    init(_ file: String) {
        var fragments: [String: String] = [:]
        var rest = file[...]
        while let opening = rest.range(of: "<template id=\"") {
            rest = rest[opening.upperBound...]
            guard let nameEnd = rest.range(of: "\">") else { break }
            let name = String(rest[..<nameEnd.lowerBound])
            rest = rest[nameEnd.upperBound...]
            if rest.first == "\n" { rest = rest.dropFirst() }
            guard let closing = rest.range(of: "</template>") else { break }
            precondition(fragments[name] == nil, "report.html has two fragments named \(name)")
            fragments[name] = String(rest[..<closing.lowerBound])
            rest = rest[closing.upperBound...]
        }
        self.fragments = fragments
    }

    /// The fragment `name` with each placeholder filled in from `values`, its words in `words`' language.
    func fill(_ name: String, _ values: [String: Filling] = [:], words: ReportWords) -> String {
        var used: Set<String> = []
        let filled = fill(name, values, words: words, used: &used)
        if used.count != values.count {
            let unused = Set(values.keys).subtracting(used).sorted().joined(separator: "}}, {{")
            preconditionFailure("report.html's fragment \(name) has no {{\(unused)}}")
        }
        return filled
    }

    /// The fragment `name` filled in, the values it used added to `used` (a fragment inside an entry's sentence
    /// takes its values from the fragment around it).
    private func fill(
        _ name: String, _ values: [String: Filling], words: ReportWords, used: inout Set<String>
    ) -> String {
        guard let fragment = fragments[name] else {
            preconditionFailure("report.html has no fragment named \(name)")
        }
        var filled = ""
        filled.reserveCapacity(fragment.utf8.count)
        var rest = fragment[...]
        while let opening = rest.range(of: "{{"), let closing = rest[opening.upperBound...].range(of: "}}") {
            let placeholder = String(rest[opening.upperBound..<closing.lowerBound])
            filled += rest[..<opening.lowerBound]
            if placeholder.hasPrefix("t:") {
                let parts = placeholder.dropFirst(2).split(separator: " ")
                guard let entry = parts.first else {
                    preconditionFailure("report.html's fragment \(name) has {{t:}} without an entry")
                }
                let arguments = parts.dropFirst().map { argument in
                    if argument.hasPrefix("@") {
                        return fill(String(argument.dropFirst()), values, words: words, used: &used)
                    }
                    guard let value = values[String(argument)] else {
                        preconditionFailure(
                            "report.html's fragment \(name) has {{\(placeholder)}}, whose \(argument) nothing fills in")
                    }
                    used.insert(String(argument))
                    return value.html
                }
                filled += words.html(String(entry), arguments)
            } else {
                guard let value = values[placeholder] else {
                    preconditionFailure("report.html's fragment \(name) has {{\(placeholder)}}, which nothing fills in")
                }
                filled += value.html
                used.insert(placeholder)
            }
            rest = rest[closing.upperBound...]
        }
        filled += rest
        return filled
    }
}
