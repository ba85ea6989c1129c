import ArgumentParser
import FareCore
import Foundation
import TicketFormats
import TrustStore

/// `farecheck revoke`: record a revoked ticket or key.
struct RevokeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "revoke",
        abstract: "Revoke a ticket (--issuer and --ticket-id or --ticket-key) or a key (--key).",
        discussion: """
            A revoked ticket, or any ticket signed with a revoked key, then verifies as `revoked`. FC1 ticket \
            ids are hex, as `verify` prints them; a UIC ticket can be named by its U_HEAD ticket key as text \
            (--ticket-key RPEX4F-4) with its RICS issuer code (--issuer 0080). A VDV-KA ticket is named by its \
            selling (KVP) organisation and entitlement number, as `verify` shows them \
            (--vdv-org 57 --entitlement 2099643).
            """
    )

    @Option(help: "The issuer of the ticket (or of the key, when its id is not in the store).") var issuer: String?
    @Option(name: .customLong("ticket-id"), help: "The ticket id in hex (as `verify` prints it).") var ticketID: String?
    @Option(name: .customLong("ticket-key"), help: "The ticket id as text (a UIC U_HEAD ticket key).") var ticketKey:
        String?
    @Option(help: "The key id (hex for FC1 keys).") var key: String?
    @Option(name: .customLong("vdv-org"), help: "A VDV-KA ticket's selling (KVP) organisation number.")
    var vdvOrganisation: UInt32?
    @Option(help: "A VDV-KA ticket's entitlement number (with --vdv-org).") var entitlement: UInt32?
    @Option(help: "Why, shown to the inspector.") var reason: String?
    @OptionGroup var store: StoreOptions

    func validate() throws {
        if vdvOrganisation != nil || entitlement != nil {
            guard vdvOrganisation != nil, entitlement != nil, issuer == nil, ticketID == nil, ticketKey == nil, key == nil
            else { throw ValidationError("a VDV-KA ticket is named by --vdv-org and --entitlement, together and alone") }
            return
        }
        let targets = [ticketID, ticketKey, key].compactMap { $0 }.count
        guard targets == 1 else {
            throw ValidationError("give one of --ticket-id or --ticket-key (with --issuer), or --key")
        }
        if key == nil, issuer == nil { throw ValidationError("revoking a ticket needs --issuer") }
    }

    /// Issuers are stored as tickets are matched: a UIC RICS code without leading zeros (`80` = `0080`).
    private var storedIssuer: String? {
        issuer.map(UICKeyList.storedIssuer)
    }

    func run() throws {
        let trustStore = try store.open()
        do {
            if let vdvOrganisation, let entitlement {
                let bytes = VDVEntitlement.ticketID(entitlementNumber: entitlement)
                try trustStore.revokeTicket(
                    TicketRevocationRecord(issuer: String(vdvOrganisation), ticketID: bytes, reason: reason))
                printLine("revoked VDV entitlement \(entitlement) of organisation \(vdvOrganisation)")
            } else if let issuer = storedIssuer, ticketID != nil || ticketKey != nil {
                let bytes: [UInt8]
                if let ticketKey {
                    bytes = Array(ticketKey.utf8)
                } else {
                    guard let parsed = ticketID.flatMap({ [UInt8](hex: $0) }), !parsed.isEmpty else {
                        throw ValidationError("--ticket-id must be hex")
                    }
                    bytes = parsed
                }
                try trustStore.revokeTicket(TicketRevocationRecord(issuer: issuer, ticketID: bytes, reason: reason))
                printLine("revoked ticket \(bytes.hexString) of \(issuer)")
            } else if let key {
                let isUIC = issuer.map(UICKeyList.isRICSCode) ?? false
                let keyID = isUIC ? UICKeyList.normalizedCode(key) : key.lowercased()
                let known = try trustStore.keys(withID: keyID, issuer: storedIssuer)
                let fallbackFamily: KeyFamily = isUIC ? .uic : .fc1
                let targets =
                    known.isEmpty
                    ? storedIssuer.map { [($0, fallbackFamily)] } ?? [] : known.map { ($0.issuer, $0.family) }
                guard !targets.isEmpty else {
                    throw CommandFailure.exit("key \(key) is not in the store; give --issuer to revoke it anyway")
                }
                for (owner, family) in targets {
                    try trustStore.revokeKey(
                        KeyRevocationRecord(family: family, issuer: owner, keyID: keyID, reason: reason))
                    printLine("revoked \(family.storeName) key \(keyID) of \(owner)")
                }
            }
        } catch let error as StoreError {
            throw CommandFailure.exit(error.description)
        }
    }
}
