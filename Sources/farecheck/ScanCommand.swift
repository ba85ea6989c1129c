import ArgumentParser
import FareCore
import Foundation
import Symbols

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `farecheck scan`: decodes every Aztec, QR, Micro QR, Data Matrix and PDF417 symbol in image files.
struct ScanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scan",
        abstract: "Decode every barcode symbol in images (PNG, JPEG, PGM/PPM) and print its payload.",
        discussion: """
            Directories are searched recursively; files are taken in sorted order, and files whose \
            extension is not .png, .jpg/.jpeg, .pgm, .ppm, .pbm or .pnm are skipped. A file named \
            explicitly is read whatever its extension.

            Each symbol is printed as one line: the file, the symbology, the payload's length and the \
            payload, as text when every byte is printable UTF-8 ("text: …") and otherwise as \
            hexadecimal bytes ("hex: …"). With --json each symbol is one JSON object per line with \
            file, symbology, byteCount, payloadBase64, engine and, for printable payloads, text.

            With --video FILE the frames of a recording (YUV4MPEG2) are read instead, and each \
            presentation is printed once, from the first frame it was read in: a ticket held in view is one \
            presentation, a different ticket is a new one at once, and the same ticket shown again after \
            --new-presentation-after seconds out of view is a new one. With --json each is one object with \
            file, frame, timeSeconds, symbology, byteCount, payloadBase64 and, for printable payloads, text.

            Exit status: 0 when at least one symbol was found, 1 when none was, 2 when a path does not exist \
            or a file is not an image it can read (what the other files hold is printed first), or a file is \
            not a YUV4MPEG2 recording, or one that ends inside a frame.
            """
    )

    @Argument(help: ArgumentHelp("Image files or directories to scan.", valueName: "image-or-directory"))
    var paths: [String] = []

    @OptionGroup var videoOptions: VideoOptions

    @Flag(help: "Print one JSON object per symbol and line.")
    var json = false

    @Flag(help: "Write the bytes of the first symbol found to standard output, exactly, and nothing else.")
    var raw = false

    @Flag(help: "Only the quick first pass: faster, but misses hard images.")
    var fast = false

    @Flag(
        help: """
            Run zbar beside zxing on every image, not only when zxing finds nothing: slower, but an image \
            holding several QR codes yields every one either library reads.
            """
    )
    var bothEngines = false

    func validate() throws {
        if json && raw { throw ValidationError("--json and --raw cannot be combined") }
        if videoOptions.video != nil && !paths.isEmpty {
            throw ValidationError("give either images or --video FILE, not both")
        }
        if videoOptions.video == nil && paths.isEmpty { throw ValidationError("give images to scan, or --video FILE") }
        if videoOptions.video != nil && (fast || bothEngines) {
            throw ValidationError("--video always runs the quick camera pass: --fast and --both-engines do not apply")
        }
    }

    func run() throws {
        if let video = videoOptions.video { return try scanVideo(video) }
        // A path that is not there is said, and the others are still scanned: the answer for them comes first,
        // the exit status (2) says something could not be read.
        let missing = paths.filter { !FileManager.default.fileExists(atPath: $0) }
        for path in missing { cannotRead(path, "\(path): no such file or directory") }
        var unreadable = missing.count
        let files = collectFiles(paths.filter { FileManager.default.fileExists(atPath: $0) }, unreadable: &unreadable)
        let scanner = SymbolScanner(configuration: .init(usesFallbacks: !fast, readsWithBothEngines: bothEngines))
        if files.isEmpty, missing.count < paths.count {
            Self.writeError("farecheck scan: no PNG, JPEG or PNM files in \(paths.joined(separator: ", "))")
        }
        let progress = ProgressLine(total: files.count, enabled: isatty(2) == 1 && files.count > 1)
        var symbolCount = 0
        var filesWithoutSymbol = 0

        for (index, file) in files.enumerated() {
            progress.show(index + 1, file)
            let symbols: [DecodedSymbol]
            do {
                symbols = try scanner.scan(fileAtPath: file)
            } catch {
                unreadable += 1
                progress.clear()
                cannotRead(file, error.description)
                continue
            }
            if raw, let first = symbols.first {
                progress.clear()
                FileHandle.standardOutput.write(Data(first.bytes))
                return
            }
            if symbols.isEmpty {
                filesWithoutSymbol += 1
                if !raw && files.count == 1 {
                    progress.clear()
                    Self.writeError("farecheck scan: \(file): no symbol found")
                }
                continue
            }
            progress.clear()
            for symbol in symbols {
                Self.writeLine(
                    json ? Self.jsonLine(file: file, symbol: symbol) : Self.textLine(file: file, symbol: symbol))
            }
            symbolCount += symbols.count
        }
        progress.clear()
        if files.count > 1 && !raw {
            Self.writeError(
                "farecheck scan: \(ReadableText.count(files.count, "file")), "
                    + "\(ReadableText.count(symbolCount, "symbol")), "
                    + "\(filesWithoutSymbol) without a symbol, \(unreadable) unreadable")
        }
        if unreadable > 0 { throw ExitCode(2) }
        if symbolCount == 0 { throw ExitCode(1) }
    }

    /// A file that could not be read: said on standard error and, with --json, as a line of its own on standard
    /// output (`{"error":{"code":"could-not-run","message":…},"file":…}`), so that the JSON names every file.
    private func cannotRead(_ file: String, _ message: String) {
        Self.writeError("farecheck scan: \(message)")
        guard json else { return }
        let error = JSONErrorDocument.line(status: .couldNotRun, message: message)
        Self.writeLine(String(error.dropLast()) + ",\"file\":\(Self.jsonString(file))}")
    }

    // MARK: - Video

    private func scanVideo(_ path: String) throws {
        guard FileManager.default.fileExists(atPath: path) else {
            Self.writeError("farecheck scan: \(path): no such file or directory")
            throw ExitCode(2)
        }
        var count = 0
        var stopped = false
        let frames: Int
        do {
            frames = try videoOptions.readPresentations(of: path) { presentation in
                guard !stopped else { return }
                count += 1
                if raw {
                    FileHandle.standardOutput.write(Data(presentation.symbol.bytes))
                    stopped = true
                } else {
                    Self.writeLine(
                        json
                            ? Self.jsonLine(file: path, presentation: presentation)
                            : Self.textLine(file: path, presentation: presentation))
                }
            }
        } catch {
            Self.writeError("farecheck scan: \(error.description)")
            throw ExitCode(2)
        }
        if !raw {
            Self.writeError("farecheck scan: \(path): \(frames) frames, \(count) presentations")
        }
        if count == 0 { throw ExitCode(1) }
    }

    /// `FILE frame N (T s): SYMBOLOGY, N bytes, text: …` or `…, hex: …`.
    static func textLine(file: String, presentation: Presentation) -> String {
        let bytes = presentation.symbol.bytes
        let payload = printableText(bytes).map { "text: \($0)" } ?? "hex: \(hex(bytes))"
        return "\(file) frame \(presentation.frame) (\(presentation.timeText)): "
            + "\(presentation.symbol.symbology.rawValue), \(bytes.count) bytes, \(payload)"
    }

    /// One JSON object per presentation; keys in a fixed order.
    static func jsonLine(file: String, presentation: Presentation) -> String {
        let bytes = presentation.symbol.bytes
        let components = presentation.time.components
        let seconds = Double(components.seconds) + Double(components.attoseconds) / 1e18
        var fields = [
            ("file", jsonString(file)),
            ("frame", String(presentation.frame)),
            ("timeSeconds", String(seconds)),
            ("symbology", jsonString(presentation.symbol.symbology.rawValue)),
            ("byteCount", String(bytes.count)),
            ("payloadBase64", jsonString(Data(bytes).base64EncodedString())),
        ]
        if let text = printableText(bytes) { fields.append(("text", jsonString(text))) }
        return "{" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
    }

    // MARK: - Files

    /// The image files to scan: named files as they are, directories walked recursively for image
    /// extensions, everything in sorted order. Directories that cannot be listed are reported and counted.
    private func collectFiles(_ paths: [String], unreadable: inout Int) -> [String] {
        var files: [String] = []
        for path in paths {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
                files.append(path)
                continue
            }
            var found: [String] = []
            var visited: Set<String> = []
            walk(directory: path, into: &found, visited: &visited, unreadable: &unreadable)
            files += found.sorted()
        }
        return files
    }

    private func walk(directory: String, into files: inout [String], visited: inout Set<String>, unreadable: inout Int)
    {
        // Symbolic links can make loops; each real directory is entered once.
        let real = URL(fileURLWithPath: directory).resolvingSymlinksInPath().path
        guard visited.insert(real).inserted else { return }
        let entries: [String]
        do {
            entries = try FileManager.default.contentsOfDirectory(atPath: directory)
        } catch {
            unreadable += 1
            Self.writeError("farecheck scan: \(directory): cannot list the directory")
            return
        }
        let base = directory.hasSuffix("/") ? directory : directory + "/"
        for entry in entries.sorted() {
            let path = base + entry
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { continue }
            if isDirectory.boolValue {
                walk(directory: path, into: &files, visited: &visited, unreadable: &unreadable)
            } else if ImageFileFormat(path: entry) != nil {
                files.append(path)
            }
        }
    }

    // MARK: - Output

    /// `FILE: SYMBOLOGY, N bytes, text: …` or `…, hex: …`.
    static func textLine(file: String, symbol: DecodedSymbol) -> String {
        let payload = printableText(symbol.bytes).map { "text: \($0)" } ?? "hex: \(hex(symbol.bytes))"
        return "\(file): \(symbol.symbology.rawValue), \(symbol.bytes.count) bytes, \(payload)"
    }

    /// One JSON object; keys in a fixed order so that lines can be compared as text.
    static func jsonLine(file: String, symbol: DecodedSymbol) -> String {
        var fields = [
            ("file", jsonString(file)),
            ("symbology", jsonString(symbol.symbology.rawValue)),
            ("byteCount", String(symbol.bytes.count)),
            ("payloadBase64", jsonString(Data(symbol.bytes).base64EncodedString())),
            ("engine", jsonString(symbol.engine.rawValue)),
        ]
        if let text = printableText(symbol.bytes) { fields.append(("text", jsonString(text))) }
        return "{" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
    }

    /// The payload as text when it is valid UTF-8 without control characters, else `nil`.
    static func printableText(_ bytes: [UInt8]) -> String? {
        guard !bytes.isEmpty, let text = String(validating: bytes, as: UTF8.self) else { return nil }
        let isPrintable = text.unicodeScalars.allSatisfy { scalar in
            !(scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value))
        }
        return isPrintable ? text : nil
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var characters: [UInt8] = []
        characters.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            characters.append(digits[Int(byte >> 4)])
            characters.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: characters, as: UTF8.self)
    }

    static func jsonString(_ text: String) -> String {
        var escaped = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": escaped += "\\\""
            case "\\": escaped += "\\\\"
            case "\n": escaped += "\\n"
            case "\r": escaped += "\\r"
            case "\t": escaped += "\\t"
            case _ where scalar.value < 0x20:
                escaped += String(format: "\\u%04x", scalar.value)
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped + "\""
    }

    /// One line to standard output, written at once so that a pipe sees it immediately.
    static func writeLine(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    static func writeError(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}

/// "scanning 12/340 …" on standard error, redrawn in place; only when standard error is a terminal.
private struct ProgressLine {
    let total: Int
    let enabled: Bool

    func show(_ index: Int, _ file: String) {
        guard enabled else { return }
        let name = file.count > 50 ? "…" + file.suffix(49) : file
        FileHandle.standardError.write(Data("\r\u{1B}[2Kscanning \(index)/\(total) \(name)".utf8))
    }

    /// Erases the line before anything else is printed.
    func clear() {
        guard enabled else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[2K".utf8))
    }
}
