import Foundation
import TestSupport
import Testing

/// The docs' commands run as written (issue 52): each ```sh block that README.md or a page in docs/ marks with
/// `<!-- doc-test: … -->` is run by bash in a scratch directory that has the repository's Keys/ (the docs run
/// from the repository root), with the programs this build made on PATH in place of the blocks' `alias` lines.
/// Every command must end with exit status 0, or with the one its comment names ("# EXPIRED: exit status 1").
@Suite("the documentation's commands run as written", .serialized, .timeLimit(.minutes(5)))
struct DocumentedCommandsTests {
    /// One command of a block: its first line in the file, its text (continuation lines and here-documents
    /// included) and the exit status it must end with.
    struct Command: Sendable {
        var line: Int
        var text: String
        var expectedStatus: Int32
    }

    /// One marked block.
    struct Block: Sendable, CustomTestStringConvertible {
        var file: String
        var line: Int
        var commands: [Command]
        var testDescription: String { "\(file):\(line)" }
    }

    /// The pages that may hold marked blocks, from the repository root.
    static let pages: [String] = {
        let docs = (try? FileManager.default.contentsOfDirectory(atPath: repositoryRoot + "/docs")) ?? []
        return ["README.md"] + docs.filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
    }()

    /// Every marked block of every page.
    static func blocks() -> [Block] {
        pages.flatMap { page -> [Block] in
            guard let text = try? String(contentsOfFile: repositoryRoot + "/" + page, encoding: .utf8) else {
                return []
            }
            return blocks(in: text, file: page)
        }
    }

    /// The marked blocks of one page, split into commands.
    static func blocks(in text: String, file: String) -> [Block] {
        let lines = text.components(separatedBy: "\n")
        var blocks: [Block] = []
        var index = 0
        while index < lines.count {
            defer { index += 1 }
            guard lines[index].hasPrefix("<!-- doc-test"), index + 1 < lines.count, lines[index + 1] == "```sh" else {
                continue
            }
            var body: [(Int, String)] = []
            index += 2
            while index < lines.count, lines[index] != "```" {
                body.append((index + 1, lines[index]))
                index += 1
            }
            blocks.append(Block(file: file, line: body.first?.0 ?? index, commands: commands(body)))
        }
        return blocks
    }

    /// Joins continuation lines and here-documents into commands; drops comments, blank lines and `alias` lines.
    static func commands(_ body: [(Int, String)]) -> [Command] {
        var commands: [Command] = []
        var position = 0
        while position < body.count {
            let (number, first) = body[position]
            position += 1
            let trimmed = first.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed.hasPrefix("#") || trimmed.hasPrefix("alias ") { continue }
            var text = first
            while text.hasSuffix("\\"), position < body.count {
                text += "\n" + body[position].1
                position += 1
            }
            if let range = text.range(of: #"<<'?([A-Z]+)'?"#, options: .regularExpression) {
                let word = text[range].trimmingCharacters(in: CharacterSet(charactersIn: "<'"))
                while position < body.count {
                    text += "\n" + body[position].1
                    position += 1
                    if body[position - 1].1 == word { break }
                }
            }
            commands.append(Command(line: number, text: text, expectedStatus: expectedStatus(text)))
        }
        return commands
    }

    /// The status a command's comment names ("exit status 1"), else 0.
    static func expectedStatus(_ text: String) -> Int32 {
        guard let range = text.range(of: #"#[^\n]*exit status ([0-9]+)"#, options: .regularExpression) else { return 0 }
        return Int32(text[range].split(separator: " ").last.map(String.init) ?? "") ?? 0
    }

    /// The script that runs `block`: each command, then a check of its status that stops at the first surprise.
    static func script(_ block: Block) -> String {
        var script = "set -u\n"
        for command in block.commands {
            script += """
                \(command.text)
                status=$?
                if [ $status -ne \(command.expectedStatus) ]; then
                    echo "\(block.file):\(command.line): exit status $status, expected \(command.expectedStatus)" >&2
                    exit 100
                fi

                """
        }
        return script
    }

    @Test("README, gate.md and server.md each mark their walkthrough, and every marked block has commands")
    func walkthroughsAreMarked() {
        let blocks = Self.blocks()
        for page in ["README.md", "docs/gate.md", "docs/server.md"] {
            #expect(blocks.contains { $0.file == page }, "\(page) marks no block for DocumentedCommandsTests")
        }
        for block in blocks { #expect(!block.commands.isEmpty, "\(block.file):\(block.line) has no command") }
        // The README's walkthrough expects the two verdicts its comments name.
        let readme = blocks.first { $0.file == "README.md" }
        #expect(readme?.commands.filter { $0.expectedStatus == 1 }.count == 2)
    }

    @Test("a marked block runs as written", arguments: blocks())
    func runs(_ block: Block) throws {
        let bench = Workbench()
        try FileManager.default.createSymbolicLink(
            atPath: bench.path("Keys"), withDestinationPath: repositoryRoot + "/Keys")
        try FileManager.default.createDirectory(atPath: bench.path("home"), withIntermediateDirectories: true)
        let programs = (Workbench.farecheck as NSString).deletingLastPathComponent
        var environment = ProcessInfo.processInfo.environment
        environment["PATH"] = programs + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        environment["HOME"] = bench.path("home")
        for name in ["FARECHECK_DB", "FARECHECK_SERVER_DB", "FARECHECK_SERVER_DATABASE_URL", "XDG_DATA_HOME"] {
            environment[name] = nil
        }
        let run = try bench.run("/bin/bash", ["-c", Self.script(block)], environment: environment)
        #expect(
            run.status == 0,
            "\(block.file):\(block.line) did not run as written:\n\(run.stderr.suffix(3000))\n\(run.text.suffix(1000))")
    }
}
