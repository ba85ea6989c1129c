import ArgumentParser
import FareCore
import Foundation
import Issuing
import Symbols
import TicketFormats

extension BarcodeKind: ExpressibleByArgument {}

extension BarcodeKind {
    /// Renders the payload and writes it as a PNG, or exits with status 2.
    func render(_ payload: [UInt8], moduleSize: Int, to path: String) throws {
        do {
            try image(payload, moduleSize: moduleSize).writePNG(toFile: path)
        } catch {
            throw CommandFailure.exit("cannot render the \(rawValue) code to \(path): \(error)")
        }
    }
}

extension IssuingKey {
    /// Signs the claims into a payload that the barcode writer encodes faithfully.
    ///
    /// zxing-cpp 1.4's Aztec encoder gets a few byte sequences wrong, and the writer refuses those (it reads
    /// each symbol back). The ticket is then signed again with `issuedAt` one second earlier, which changes the
    /// bytes (EdDSA signatures are deterministic, so signing alone would not), up to 8 times.
    func checkedPayload(for claims: FC1.Claims, barcode: BarcodeKind, prefix: String = FC1.defaultPrefix) throws
        -> [UInt8]
    {
        var attempt = claims
        for _ in 0..<8 {
            let payload = try self.payload(for: attempt, barcode: barcode, prefix: prefix)
            do {
                _ = try barcode.image(payload, moduleSize: 1)
                return payload
            } catch let error as SymbolWriteError where error.isEncoderFault {
                attempt.issuedAt = attempt.issuedAt.addingTimeInterval(-1)
            }
        }
        throw CommandFailure.exit("the \(barcode.rawValue) encoder could not write this ticket faithfully")
    }
}

/// `farecheck issue`: sign an FC1 test ticket and render it as a barcode image.
struct IssueCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "issue",
        abstract: "Issue a signed FC1 ticket and render it as a PNG barcode (for tests, demos and trials).",
        discussion: """
            QR codes carry the text form (FC1: + base45 of the zlib-compressed COSE message, in QR's \
            alphanumeric mode); Aztec codes carry the zlib-compressed COSE bytes. The key file is one \
            written by `farecheck keys generate` (its issuer and kid are read from it) or any PEM \
            private key with --issuer.
            """
    )

    @Option(help: "The private key file.") var key: String
    @Option(help: "The issuer (default: the one named in the key file).") var issuer: String?
    @Option(help: "The product: single, day, month, ...") var product: String = "single"
    @Option(help: "Comma-separated zones (default: whole network).") var zones: String?
    @Option(help: "Passenger category: adult, child, senior, reduced, disabled.") var category: String?
    @Option(help: "Number of passengers.") var passengers: Int?
    @Option(help: "What the inspector checks against the holder, e.g. \"ID ****1234\".") var holder: String?
    @Option(
        name: .customLong("valid-from"),
        help: ArgumentHelp("Start of validity (default now).", discussion: TimeInput.optionHelp, valueName: "time"),
        transform: parseTime)
    var validFrom: TimeInput?
    @Option(
        name: .customLong("valid-until"),
        help: ArgumentHelp(
            "End of validity (default: valid-from + 1 day).", discussion: TimeInput.optionHelp, valueName: "time"),
        transform: parseTime)
    var validUntil: TimeInput?
    @Option(
        name: .customLong("activated-at"),
        help: ArgumentHelp(
            "Activation time, for tickets activated by the rider.", discussion: TimeInput.optionHelp, valueName: "time"),
        transform: parseTime)
    var activatedAt: TimeInput?
    @Option(name: .customLong("duration"), help: "Validity in seconds after activation.") var duration: Int?
    @Option(name: .customLong("ticket-id"), help: "The ticket id in hex (default: 16 random bytes).") var ticketID:
        String?
    @Option(help: "The key id to put in the ticket, in hex (default: the one named in the key file).") var kid: String?
    @Option(help: "qr or aztec.") var barcode: BarcodeKind = .qr
    @Option(help: "The PNG to write.") var out: String?
    @Option(name: .customLong("payload-out"), help: "Also write the raw barcode payload to this file.") var payloadOut:
        String?
    @Option(name: .customLong("module-size"), help: "Pixels per barcode module.") var moduleSize: Int = 6
    @Option(help: "The text prefix of the QR form.") var prefix: String = FC1.defaultPrefix

    func validate() throws {
        if out == nil, payloadOut == nil { throw ValidationError("give --out FILE.png and/or --payload-out FILE") }
        if let passengers, passengers < 1 { throw ValidationError("--passengers must be at least 1") }
        if !(1...40).contains(moduleSize) { throw ValidationError("--module-size must be 1 to 40 pixels") }
    }

    func run() throws {
        var signingKey: IssuingKey
        do {
            signingKey = try IssuingKey.load(from: key)
        } catch {
            throw CommandFailure.exit(error.message)
        }
        if let kid {
            guard let parsed = [UInt8](hex: kid), !parsed.isEmpty else { throw ValidationError("--kid must be hex") }
            signingKey.keyID = parsed
        }
        guard let issuer = issuer ?? signingKey.issuer else {
            throw ValidationError("the key file names no issuer: give --issuer")
        }
        noteReading(of: validFrom, option: "--valid-from")
        noteReading(of: validUntil, option: "--valid-until")
        noteReading(of: activatedAt, option: "--activated-at")
        let now = Date()
        let start = validFrom?.date ?? now
        let end = validUntil?.date ?? start.addingTimeInterval(86400)
        guard end > start else { throw ValidationError("--valid-until must be after --valid-from") }
        var id: [UInt8]
        if let ticketID {
            guard let parsed = [UInt8](hex: ticketID), !parsed.isEmpty else {
                throw ValidationError("--ticket-id must be hex")
            }
            id = parsed
        } else {
            var generator = SystemRandomNumberGenerator()
            id = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        }
        let claims = FC1.Claims(
            issuer: issuer, ticketID: id, issuedAt: now, validFrom: start, validUntil: end, product: product,
            zones: zones.map { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } },
            category: category, passengers: passengers, holder: holder, activatedAt: activatedAt?.date,
            activationDuration: duration
        )
        let payload = try signingKey.checkedPayload(for: claims, barcode: barcode, prefix: prefix)
        if let payloadOut {
            guard FileManager.default.createFile(atPath: payloadOut, contents: Data(payload)) else {
                throw CommandFailure.exit("cannot write \(payloadOut)")
            }
        }
        if let out {
            try barcode.render(payload, moduleSize: moduleSize, to: out)
        }
        let written = [out, payloadOut].compactMap { $0 }.joined(separator: " and ")
        printLine(
            "ticket \(id.hexString) (\(product), \(issuer), kid \(signingKey.keyID.hexString), \(payload.count) payload bytes) written to \(written)"
        )
    }
}
