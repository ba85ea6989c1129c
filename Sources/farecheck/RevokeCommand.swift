import ArgumentParser
import FareCore
import Foundation
import TicketFormats
import TrustStore

/// `farecheck revoke`: record a revoked ticket or key.
struct RevokeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "revoke",
        abstract: "Revoke a ticket (--issuer and --ticket-id) or a key (--key).",
        discussion: "A revoked ticket, or any ticket signed with a revoked key, then verifies as `revoked`."
    )

    @Option(help: "The issuer of the ticket (or of the key, when its id is not in the store).") var issuer: String?
    @Option(name: .customLong("ticket-id"), help: "The ticket id in hex (as `verify` prints it).") var ticketID: String?
    @Option(help: "The key id (hex for FC1 keys).") var key: String?
    @Option(help: "Why, shown to the inspector.") var reason: String?
    @OptionGroup var store: StoreOptions

    func validate() throws {
        guard (ticketID == nil) != (key == nil) else { throw ValidationError("give either --ticket-id (with --issuer) or --key") }
        if ticketID != nil, issuer == nil { throw ValidationError("--ticket-id needs --issuer") }
    }

    func run() throws {
        let trustStore = try store.open()
        do {
            if let ticketID, let issuer {
                guard let bytes = [UInt8](hex: ticketID), !bytes.isEmpty else { throw ValidationError("--ticket-id must be hex") }
                try trustStore.revokeTicket(TicketRevocationRecord(issuer: issuer, ticketID: bytes, reason: reason))
                printLine("revoked ticket \(bytes.hexString) of \(issuer)")
            } else if let key {
                let keyID = key.lowercased()
                let known = try trustStore.keys(withID: keyID, issuer: issuer)
                let targets = known.isEmpty ? issuer.map { [($0, FC1.formatName)] } ?? [] : known.map { ($0.issuer, $0.format) }
                guard !targets.isEmpty else {
                    throw CommandFailure.exit("key \(key) is not in the store; give --issuer to revoke it anyway")
                }
                for (owner, format) in targets {
                    try trustStore.revokeKey(KeyRevocationRecord(format: format, issuer: owner, keyID: keyID, reason: reason))
                    printLine("revoked \(format) key \(keyID) of \(owner)")
                }
            }
        } catch let error as StoreError {
            throw CommandFailure.exit(error.description)
        }
    }
}
