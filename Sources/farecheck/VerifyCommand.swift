import ArgumentParser
import FareCore
import Foundation
import Signatures
import Symbols
import TicketFormats
import TrustStore
import Verification

/// Options that shape verification, shared by `verify` and the commands that verify on the way.
struct VerificationOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Inspect as of this time instead of now (ISO 8601).", valueName: "time"))
    var at: DateArgument?

    @Option(name: .customLong("clock-skew"), help: "Seconds the clock may be off when checking validity windows.")
    var clockSkew: Double = 120

    @Option(name: .customLong("prefix"), help: "A text prefix accepted for base45 tickets (repeatable; default FC1:).")
    var prefixes: [String] = []

    /// A verifier over the store's current keys and revocations, configured by these options.
    func verifier(store: TrustStore) throws -> TicketVerifier {
        var configuration = TicketVerifier.Configuration()
        configuration.clockSkew = clockSkew
        if !prefixes.isEmpty { configuration.acceptedPrefixes = prefixes }
        let clock: any InspectionClock = at.map { FixedClock($0.date) } ?? SystemClock()
        return try Self.verifier(store: store, clock: clock, configuration: configuration)
    }

    /// A verifier over the store's current keys and revocations; exits with status 2 if the store fails.
    static func verifier(
        store: TrustStore, clock: any InspectionClock = SystemClock(),
        configuration: TicketVerifier.Configuration = .init()
    ) throws -> TicketVerifier {
        do {
            let loaded = try store.snapshot()
            let vdv = try store.vdvCertificateSet()
            (loaded.skipped + vdv.skipped).forEach { printError("farecheck: warning: skipping unreadable \($0)") }
            // The blocklists (a million entries) are looked up in the store, not loaded.
            let revocations = SnapshotRevocations(snapshot: loaded.trust, store: StoreTrust(store: store))
            return TicketVerifier(
                keys: loaded.trust, revocations: revocations, clock: clock, configuration: configuration,
                vdvCertificates: vdv.certificates)
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
            from a file of raw barcode bytes (--payload-file), or from standard input (-). \
            Exit status 0 when every ticket is valid, 1 for any other verdict (or no ticket found), \
            2 when the command could not run.
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
        help: "Print every decoded FCB field (a UIC ticket's U_FLEX record), nested, as JSON.")
    var showFCB = false
    @OptionGroup var verification: VerificationOptions
    @OptionGroup var store: StoreOptions

    func validate() throws {
        let sources = [image != nil, payloadFile != nil, stdin != nil].filter { $0 }.count
        guard sources == 1 else { throw ValidationError("give exactly one of --image FILE, --payload-file FILE or -") }
        if let stdin, stdin != "-" {
            throw ValidationError("unexpected argument \(stdin); use --image or --payload-file for files")
        }
    }

    func run() throws {
        var payloads: [(source: String, symbology: Symbology?, bytes: [UInt8])] = []
        if let image {
            guard FileManager.default.fileExists(atPath: image) else {
                throw CommandFailure.exit("\(image): no such file")
            }
            let symbols: [DecodedSymbol]
            do {
                symbols = try SymbolScanner().scan(fileAtPath: image)
            } catch {
                throw CommandFailure.exit("\(error)")
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
                printLine(jsonLine(["file": image ?? "", "error": "no barcode found"]))
            } else {
                printLine("No Aztec or QR code found in \(image ?? "the input").")
            }
            throw ExitCode(1)
        }
        var allValid = true
        for payload in payloads {
            let verdict: Verdict
            do {
                verdict = try verifier.verify(payload.bytes)
            } catch {
                throw CommandFailure.exit(error.description)
            }
            allValid = allValid && verdict.isValid
            var report = VerdictReport(
                Inspection(
                    source: payload.source, symbology: payload.symbology, payloadByteCount: payload.bytes.count,
                    payloadDigest: digest(.sha256, payload.bytes), verdict: verdict))
            let layout = showLayout ? Self.layoutLines(payload.bytes) : nil
            let fcb = showFCB ? Self.fcbJSON(payload.bytes) : nil
            if json {
                report.layout = layout
                var line = jsonLine(report)
                // The decoded tree is JSON already: it goes into the object as it is, under "fcb".
                if showFCB, line.hasSuffix("}") { line = String(line.dropLast()) + ",\"fcb\":\(fcb ?? "null")}" }
                printLine(line)
            } else {
                printLine(report.text)
                if showLayout {
                    printLine(layout.map(Self.boxed) ?? "  (no U_TLAY layout in this ticket)")
                }
                if showFCB { printLine(fcb ?? "  (no FCB content in this ticket)") }
            }
        }
        if !allValid { throw ExitCode(1) }
    }

    /// Every decoded field of a UIC ticket's U_FLEX record as JSON, or `nil` when the payload has none (or it
    /// does not decode: the verdict says why).
    static func fcbJSON(_ payload: [UInt8]) -> String? {
        guard UIC918_3.isContainer(payload), let container = try? UICContainer(parsing: payload),
            let record = container.record(UICFlex.recordID),
            let version = FCBVersion(uflexRecordVersion: record.version),
            let data = try? FCBData(decoding: record.body, version: version)
        else { return nil }
        return data.json
    }

    /// The U_TLAY grid of a UIC ticket, or `nil` when the payload has none (or is not UIC).
    ///
    /// Drawn from the payload as scanned, whatever the verdict: a forged ticket's text is shown too, under
    /// its verdict, because the inspector compares it with the paper.
    static func layoutLines(_ payload: [UInt8]) -> [String]? { UIC918_3.printedLayout(of: payload) }

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

    func revocation(ofTicket ticketID: [UInt8], issuer: String) throws -> Revocation? {
        snapshot.revocation(ofTicket: ticketID, issuer: issuer)
    }

    func revocation(ofKey key: TrustedKey) throws -> Revocation? {
        snapshot.revocation(ofKey: key)
    }

    func blocklistRevocation(for key: BlocklistKey) throws -> BlocklistRevocation? {
        try store.blocklistRevocation(for: key)
    }
}

/// A verdict as farecheck prints it: one JSON object, or a few lines of text.
struct VerdictReport: Encodable {
    var source: String
    var symbology: String?
    var payloadBytes: Int
    var verdict: VerdictKind
    var reason: String
    var signature: SignatureStatus
    var format: TicketFormat?
    var issuer: String?
    var keyId: String?
    var ticketId: String?
    var validFrom: Date?
    var validUntil: Date?
    var issuedAt: Date?
    var product: String?
    var zones: [String]?
    var category: String?
    var passengers: Int?
    var holder: String?
    var activatedAt: Date?
    var reactivations: Int?
    /// Format-specific content in display order (UIC: header, records, 0080BL fields, layout texts).
    var details: [Detail]?
    /// What the demo expected, when the report comes from `farecheck demo`.
    var expected: String?
    /// The U_TLAY layout as text lines, with `--show-layout`.
    var layout: [String]?

    struct Detail: Encodable {
        var label: String
        var value: String
    }
    var warnings: [String]
    var warningMessages: [String]
    var inspectedAt: Date
    /// For a ticket on a published blocklist: `{list, version, entry, lockMode, action}`.
    var revocation: BlocklistRevocation?

    /// The report of `inspection`: the one mapping from an inspection to what the CLI prints.
    init(_ inspection: Inspection) {
        let verdict = inspection.verdict
        self.source = inspection.source
        self.symbology = inspection.symbology?.rawValue
        self.payloadBytes = inspection.payloadByteCount
        self.verdict = verdict.kind
        self.reason = verdict.reason
        self.signature = verdict.signature
        self.format = verdict.format
        self.issuer = verdict.ticket?.issuer ?? verdict.issuer
        self.keyId = verdict.keyID
        let ticket = verdict.ticket
        self.ticketId = ticket?.ticketIDHex
        self.validFrom = ticket?.validFrom
        self.validUntil = ticket?.validUntil
        self.issuedAt = ticket?.issuedAt
        self.product = ticket?.product
        self.zones = ticket?.zones
        self.category = ticket?.category
        self.passengers = ticket?.passengers
        self.holder = ticket?.holder
        self.activatedAt = ticket?.activatedAt
        self.reactivations = ticket?.reactivations
        if let details = ticket?.details, !details.isEmpty {
            self.details = details.map { Detail(label: $0.label, value: $0.value) }
        }
        self.warnings = verdict.warnings.map(\.code)
        self.warningMessages = verdict.warnings.map(\.message)
        self.inspectedAt = verdict.inspectedAt
        self.revocation = verdict.blocklistRevocation
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
            add("ACTION", revocation.action.instruction.uppercased())
            add("blocklist", "\(revocation.list.displayName) version \(revocation.version), \(revocation.entry)")
        }
        add("source", source + (symbology.map { " (\($0))" } ?? ""))
        var signatureLine = signature.rawValue
        if let format { signatureLine += ", \(format)" }
        if let keyId { signatureLine += ", key \(keyId)" }
        add("signature", signatureLine)
        add("issuer", issuer)
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
        for (code, message) in zip(warnings, warningMessages) { add("warning", "\(code): \(message)") }
        add("checked at", inspectedAt.iso8601)
        return lines.joined(separator: "\n")
    }
}
