import Foundation

/// Checks a command line against the commands' own description of their options (the argument parser's JSON dump,
/// `--experimental-dump-help`) before it is parsed, for what the parser lets through (issue 52): a single-value
/// option given twice (`verify --image a.png --image b.png` would silently use b.png), and an unknown option that a
/// command's optional argument would otherwise swallow (`verify --imgae a.png`), with the option meant suggested.
public enum CommandLineCheck {
    /// The usage error in `arguments` (without the program's name), or nil when there is none the parser would miss.
    ///
    /// - Parameter description: The program's `--experimental-dump-help` JSON.
    public static func problem(in arguments: [String], description: String) -> String? {
        guard let data = description.data(using: .utf8),
            let root = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any],
            var command = root["command"] as? [String: Any]
        else { return nil }
        var options: [String: Option] = [:]
        var position = 0
        // The subcommand path: names as long as they match; the options of every command on the path count (an
        // option group, --help and --version are listed with each command already).
        while position < arguments.count,
            let next = (command["subcommands"] as? [[String: Any]])?.first(where: {
                $0["commandName"] as? String == arguments[position]
            })
        {
            command = next
            position += 1
        }
        for argument in command["arguments"] as? [[String: Any]] ?? [] {
            guard let kind = argument["kind"] as? String, kind != "positional" else { continue }
            let option = Option(
                takesValue: kind == "option", repeats: argument["isRepeating"] as? Bool ?? false,
                upToNextOption: argument["parsingStrategy"] as? String == "upToNextOption")
            for name in argument["names"] as? [[String: Any]] ?? [] {
                guard let text = name["name"] as? String else { continue }
                options[(name["kind"] as? String == "long" ? "--" : "-") + text] = option
            }
        }
        options["--help"] = Option(takesValue: false, repeats: false, upToNextOption: false)
        options["-h"] = options["--help"]
        var seen: [String: Int] = [:]
        while position < arguments.count {
            let token = arguments[position]
            position += 1
            if token == "--" { break }
            guard token.hasPrefix("--"), token.count > 2 else { continue }
            let name = token.split(separator: "=", maxSplits: 1).first.map(String.init) ?? token
            guard let option = options[name] else {
                let known = options.keys.filter { $0.hasPrefix("--") }
                let suggestion = closest(to: name, among: known).map { "; did you mean \($0)?" } ?? ""
                return "unknown option \(name)\(suggestion)"
            }
            if option.takesValue, !option.repeats {
                seen[name, default: 0] += 1
                if seen[name] == 2 { return "\(name) is given more than once; give it once" }
            }
            guard option.takesValue, !token.contains("=") else { continue }
            if option.upToNextOption {
                while position < arguments.count, !arguments[position].hasPrefix("-") { position += 1 }
            } else {
                position += 1
            }
        }
        return nil
    }

    private struct Option {
        var takesValue: Bool
        var repeats: Bool
        var upToNextOption: Bool
    }

    /// The name nearest `name` within an edit distance of a third of its length (at least 2), if any.
    static func closest(to name: String, among names: [String]) -> String? {
        let limit = max(2, name.count / 3)
        return names.map { ($0, distance(name, $0)) }.filter { $0.1 <= limit }.min { ($0.1, $0.0) < ($1.1, $1.0) }?.0
    }

    /// The Damerau–Levenshtein distance (optimal string alignment): a swap of two neighbours counts one.
    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
        var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { table[i][0] = i }
        for j in 0...b.count { table[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1)
                }
            }
        }
        return table[a.count][b.count]
    }
}
