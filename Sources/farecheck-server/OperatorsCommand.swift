import Foundation
import ValidationServer

/// `operators`: the people allowed to read the operator report (`/report`).
typealias Operators = AccountCommand<OperatorAccounts>

/// The operators' accounts: a name, nothing else.
enum OperatorAccounts: AccountKind {
    static let words = AccountWords(
        command: "operators", noun: "operator", name: "name",
        abstract: "Add, revoke and list operators, who read the report at /report (not devices).",
        add: "Add an operator and print its token (shown once; only its hash is kept).",
        addDiscussion: """
            The operator logs in to /report with the token, or sends it as `Authorization: Bearer TOKEN` to \
            /report.csv and /report.json. The token opens the report only: it is refused by the validation \
            API, as a device's token is refused by the report.
            """,
        addName: "The operator's name, e.g. alex@agency.example.",
        revoke: "Revoke an operator: its token and its open sessions are refused from now on.",
        revokeName: "The operator's name.",
        list: "List operators: name, state, creation time.")

    static func add(_ name: String, _ options: NoAccountOptions, on store: any ServerStore) async throws -> (
        token: String, added: String
    ) {
        (try await store.registerOperator(name: name), "added")
    }

    static func revoke(_ name: String, on store: any ServerStore) async throws -> [String]? {
        try await store.revokeOperator(name: name) ? [] : nil
    }

    static func list(on store: any ServerStore) async throws -> [AccountListing] {
        try await store.operators().map { account in
            AccountListing(name: account.name, revoked: account.revoked, createdAt: account.createdAt)
        }
    }
}
