import ArgumentParser
import Daemon
import FareCore
import Foundation
import Presentation
import Signatures
import Symbols
import TicketFormats
import TrustStore
import Verification

/// Options that shape verification, shared by `verify` and the commands that verify on the way.
struct VerificationOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Inspect as of this time instead of now.", discussion: TimeInput.optionHelp, valueName: "time"),
        transform: parseTime)
    var at: TimeInput?

    @Option(name: .customLong("clock-skew"), help: "Seconds the clock may be off when checking validity windows.")
    var clockSkew: Double = 120

    @Option(
        name: .customLong("clock-floor-tolerance"),
        help: ArgumentHelp(
            "Seconds the device clock may read earlier than the trusted-time floor before verdicts that depend on "
                + "the time become clock-untrusted (not with --at).", valueName: "seconds"))
    var clockFloorTolerance: Double = 300

    @Option(name: .customLong("prefix"), help: "A text prefix accepted for base45 tickets (repeatable; default FC1:).")
    var prefixes: [String] = []

    @Flag(
        name: .customLong("test-keys"),
        help: """
            Judge tickets signed by test keys (UK RSP6 keys the published list marks is_test) as tickets, with the \
            warning test-key, instead of wrong-issuer: for a test bench, never in service.
            """)
    var testKeys = false

    func validate() throws {
        guard (0...86400).contains(clockFloorTolerance) else {
            throw ValidationError("--clock-floor-tolerance is seconds from 0 to 86400")
        }
        guard (0...86400).contains(clockSkew) else {
            throw ValidationError("--clock-skew is seconds from 0 to 86400, e.g. 120")
        }
    }

    /// A verifier over the store's current keys and revocations, configured by these options: the device clock
    /// held against the store's trusted-time floor, or the instant `--at` names, which nothing doubts.
    func verifier(store: TrustStore) throws -> TicketVerifier {
        var configuration = TicketVerifier.Configuration()
        configuration.clockSkew = clockSkew
        configuration.clockFloorTolerance = clockFloorTolerance
        configuration.acceptTestKeys = testKeys
        if !prefixes.isEmpty { configuration.acceptedPrefixes = prefixes }
        if let at {
            noteReading(of: at, option: "--at")
            return try Self.verifier(
                store: store, clock: FixedClock(at.date), configuration: configuration, judgingTheClock: false)
        }
        return try Self.verifier(store: store, configuration: configuration)
    }

    /// A verifier over the store's current keys and revocations; exits with status 2 if the store fails.
    ///
    /// `judgingTheClock`: whether the clock is held against the store's trusted-time floor (`clock-untrusted`
    /// when it reads earlier); false only for an explicit instant.
    static func verifier(
        store: TrustStore, clock: any InspectionClock = SystemClock(),
        configuration: TicketVerifier.Configuration = .init(), judgingTheClock: Bool = true
    ) throws -> TicketVerifier {
        do {
            let loaded = try store.snapshot()
            let vdv = try store.vdvCertificateSet()
            for skipped in loaded.skipped + vdv.skipped {
                printError("farecheck: warning: skipping unreadable \(skipped)")
            }
            // The blocklists (a million entries) are looked up in the store, not loaded.
            let revocations = SnapshotRevocations(snapshot: loaded.trust, store: StoreTrust(store: store))
            return TicketVerifier(
                keys: loaded.trust, revocations: revocations, clock: clock, configuration: configuration,
                vdvCertificates: vdv.certificates, trustedTime: judgingTheClock ? store : nil)
        } catch {
            throw CommandFailure.exit(error.description)
        }
    }
}

/// `farecheck verify`: the verdict for one payload or for every ticket in an image.
struct VerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Verify a ticket offline and print the verdict.",
        discussion: """
            The payload comes from an image (--image: every Aztec and QR symbol in it is verified), \
            from a recording (--video: one verdict per presentation, see `farecheck scan --help`), \
            from a file of raw barcode bytes (--payload-file), or from standard input (-). \
            Exit status 0 when every ticket is valid, 1 for any other verdict (or no ticket found), \
            2 when the command could not run (or a recording could not be read to its end).
            """
    )

    @Option(help: "An image (PNG, JPEG, PGM/PPM) with one or more ticket barcodes.") var image: String?
    @Option(name: .customLong("payload-file"), help: "A file holding the raw barcode payload.") var payloadFile: String?
    @Argument(help: ArgumentHelp("`-` reads the payload from standard input.", valueName: "-")) var stdin: String?
    @Flag(help: "Print the verdict as one JSON object per line.") var json = false
    @Flag(name: .customLong("show-layout"), help: "Draw a UIC ticket's U_TLAY layout as the printed ticket shows it.")
    var showLayout = false
    @Flag(
        name: .customLong("show-fcb"),
        help: "Print every decoded FCB field (a UIC U_FLEX record, a DOSIPAS FCB block), nested, as JSON.")
    var showFCB = false
    @Flag(
        help: """
            Say how the verdict was reached: every UIC key with the ticket's issuer and key id, whether it is in \
            scope for this barcode, and what came of it (the JSON always has them, as "keys").
            """)
    var explain = false
    @OptionGroup var videoOptions: VideoOptions
    @OptionGroup var verification: VerificationOptions
    @OptionGroup var store: StoreOptions

    func validate() throws {
        let sources = [image != nil, videoOptions.video != nil, payloadFile != nil, stdin != nil].filter { $0 }.count
        guard sources == 1 else {
            throw ValidationError("give exactly one of --image FILE, --video FILE, --payload-file FILE or -")
        }
        if let stdin, stdin != "-" {
            throw ValidationError("unexpected argument \(stdin); use --image or --payload-file for files")
        }
    }

    func run() throws {
        var payloads: [(source: String, symbology: Symbology?, bytes: [UInt8])] = []
        // A recording cut short still has its presentations verified; the error comes after their verdicts.
        var videoError: VideoFrameError?
        if let video = videoOptions.video {
            guard FileManager.default.fileExists(atPath: video) else {
                throw CommandFailure.exit("\(video): no such file")
            }
            do {
                _ = try videoOptions.readPresentations(of: video) { presentation in
                    payloads.append(
                        (
                            "\(video) frame \(presentation.frame)", presentation.symbol.symbology,
                            presentation.symbol.bytes
                        ))
                }
            } catch {
                if payloads.isEmpty { throw CommandFailure.exit(error.description) }
                videoError = error
            }
        } else if let image {
            guard FileManager.default.fileExists(atPath: image) else {
                throw CommandFailure.exit("\(image): no such file")
            }
            let symbols: [DecodedSymbol]
            do {
                symbols = try SymbolScanner().scan(fileAtPath: image)
            } catch {
                throw CommandFailure.exit(readable(error))
            }
            payloads = symbols.map { (image, $0.symbology, $0.bytes) }
        } else {
            let path = payloadFile ?? "-"
            payloads = [(path == "-" ? "stdin" : path, nil, Self.trimmingLineEnd(try readFile(path)))]
        }
        let trustStore = try store.open()
        let verifier = try verification.verifier(store: trustStore)
        guard !payloads.isEmpty else {
            if json {
                printLine(jsonLine(["file": image ?? videoOptions.video ?? "", "error": "no barcode found"]))
            } else {
                printLine("No Aztec or QR code found in \(image ?? videoOptions.video ?? "the input").")
            }
            throw ExitCode(1)
        }
        var allValid = true
        for payload in payloads {
            let verified: VerifiedPayload
            do {
                verified = try verifier.inspect(payload.bytes)
            } catch {
                throw CommandFailure.exit(error.description)
            }
            let verdict = verified.verdict
            allValid = allValid && verdict.isValid
            var inspection = Inspection(
                source: SourceName(payload.source), symbology: payload.symbology, payloadByteCount: payload.bytes.count,
                payloadDigest: digest(.sha256, payload.bytes), verdict: verdict)
            // The verifier's one decoding feeds the list, the layout and the FCB tree alike.
            let decoding = verified.decoding
            inspection.unreadableRecords = decoding.unreadableRecords
            var report = VerdictEvent.report(inspection)
            let layout = showLayout ? decoding.printedLayout : .absent
            let fcb = showFCB ? decoding.fcb : .absent
            if json {
                report.layout = layout.lines
                var line = jsonLine(report)
                // The decoded tree is JSON already: it goes into the object as it is, under "fcb".
                if showFCB, line.hasSuffix("}") {
                    var tree = "null"
                    if case .decoded(let json) = fcb { tree = json }
                    line = String(line.dropLast()) + ",\"fcb\":\(tree)}"
                }
                printLine(line)
            } else {
                printLine(report.text)
                if explain { printLine(report.explanation) }
                if showLayout { printLine(Self.text(of: layout)) }
                if showFCB { printLine(Self.text(of: fcb)) }
            }
        }
        if let videoError { throw CommandFailure.exit(videoError.description) }
        if !allValid { throw ExitCode(1) }
    }

    /// `--show-layout` for a person: the grid in a frame, or why there is none.
    static func text(of layout: PrintedLayout) -> String {
        switch layout {
        case .drawn(let lines) where lines.isEmpty: "  (the U_TLAY layout has no fields)"
        case .drawn(let lines): boxed(lines)
        case .unreadable(let record): "  (the \(record.location) cannot be read: \(record.reason))"
        case .containerUnreadable(let reason): "  (the ticket's records cannot be read: \(reason))"
        case .absent: "  (no U_TLAY layout in this ticket)"
        }
    }

    /// `--show-fcb` for a person: the decoded tree, or why there is none.
    static func text(of fcb: FCBContent) -> String {
        switch fcb {
        case .decoded(let json): json
        case .unreadable(let record): "  (the \(record.location) cannot be read: \(record.reason))"
        case .payloadUnreadable(let reason): "  (the ticket cannot be read: \(reason))"
        case .absent: "  (no FCB content in this ticket)"
        }
    }

    /// Lines in a frame, so that leading and trailing spaces of the grid stay visible.
    static func boxed(_ lines: [String]) -> String {
        let width = lines.map(\.count).max() ?? 0
        let rule = "  +" + String(repeating: "-", count: width) + "+"
        return ([rule] + lines.map { "  |" + $0.padding(toLength: width, withPad: " ", startingAt: 0) + "|" } + [rule])
            .joined(separator: "\n")
    }

    /// A text payload saved with a trailing newline (`echo … > file`) still verifies; binary stays as is.
    static func trimmingLineEnd(_ bytes: [UInt8]) -> [UInt8] {
        guard bytes.allSatisfy({ (0x20...0x7E).contains($0) || $0 == 0x0A || $0 == 0x0D }) else { return bytes }
        var trimmed = bytes[...]
        while let last = trimmed.last, last == 0x0A || last == 0x0D { trimmed = trimmed.dropLast() }
        return Array(trimmed)
    }
}

/// Revocations from a snapshot loaded into memory, and the published blocklists looked up in the store.
struct SnapshotRevocations: RevocationList {
    let snapshot: TrustSnapshot
    let store: StoreTrust

    func revocation(ofTicket ticketID: TicketID, issuer: IssuerID) throws -> Revocation? {
        snapshot.revocation(ofTicket: ticketID, issuer: issuer)
    }

    func revocation(ofKey key: TrustedKey) throws -> Revocation? {
        snapshot.revocation(ofKey: key)
    }

    func blocklistRevocation(for key: BlocklistKey) throws -> BlocklistRevocation? {
        try store.blocklistRevocation(for: key)
    }
}

/// A verdict as farecheck prints it: the report form of the one JSON object of an inspection (`VerdictEvent`,
/// shared with the daemon's event line), or a few lines of text.
extension VerdictEvent {
    /// How the verdict was reached, for `verify --explain`: the keys looked at, one line each.
    var explanation: String {
        guard let keys else {
            return "  keys       none listed (keys are listed for UIC 918.3, DOSIPAS, SSB and UK RSP6 tickets)"
        }
        var lines = ["  keys considered:"]
        for key in keys {
            lines.append("    \(key.issuer)/\(key.keyID) \(key.outcome.rawValue.uppercased()): \(key.reason)")
            lines.append("      \(key.listing)")
        }
        return lines.joined(separator: "\n")
    }

    /// The verdict for a person: the answer first, then what to check.
    var text: String {
        var lines = ["\(verdict.rawValue.uppercased())  \(reason)"]
        func add(_ label: String, _ value: String?) {
            guard let value, !value.isEmpty else { return }
            lines.append("  " + label.padding(toLength: max(11, label.count + 1), withPad: " ", startingAt: 0) + value)
        }
        if let revocation {
            // What the inspector does comes first, in words that stand out.
            add("ACTION", revocation.action.instruction.english.uppercased())
            add("blocklist", "\(revocation.list.displayName) version \(revocation.version), \(revocation.entry)")
        }
        add("source", device.rawValue + (symbology.map { " (\($0.rawValue))" } ?? ""))
        var signatureLine = signature.rawValue
        if let format { signatureLine += ", \(format)" }
        if let keyID { signatureLine += ", key \(keyID)" }
        add("signature", signatureLine)
        add("issuer", issuer?.rawValue)
        add("ticket", ticketId)
        var productLine = product ?? ""
        if let zones {
            productLine += ", zones \(zones.joined(separator: " "))"
        } else if product != nil {
            productLine += ", whole network"
        }
        if let category { productLine += ", \(category)" }
        if let passengers, passengers != 1 { productLine += " ×\(passengers)" }
        add("product", productLine)
        add("holder", holder)
        if validFrom != nil || validUntil != nil {
            add("valid", "\(validFrom?.iso8601 ?? "…") .. \(validUntil?.iso8601 ?? "…")")
        }
        add("activated", activatedAt?.iso8601)
        for detail in details ?? [] { add(detail.label, detail.value) }
        for record in unreadableRecords ?? [] { add("unreadable", record.description) }
        for (code, message) in zip(warnings, warningMessages) { add("warning", "\(code): \(message)") }
        add("checked at", inspectedAt.iso8601)
        if let clockFloor {
            add(
                "trusted",
                "\(clockFloor.iso8601) or later (\(clockFloorSource?.rawValue ?? "floor")): the device clock is behind"
            )
        }
        return lines.joined(separator: "\n")
    }
}
