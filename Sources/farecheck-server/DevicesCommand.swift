import ArgumentParser
import Foundation
import ValidationServer

/// `devices`: the validators allowed to call the API.
typealias Devices = AccountCommand<DeviceAccounts>

/// The validators' accounts: an id chosen by the admin and a role; revoking one withdraws its first-use claims.
enum DeviceAccounts: AccountKind {
    /// `devices add ID --role ROLE`.
    struct AddOptions: ParsableArguments {
        @Option(
            help: ArgumentHelp(
                "gate (lets passengers through and claims the first use of single-use tickets for the fleet) or "
                    + "handheld (an inspector's: never claims).", valueName: "role"))
        var role: DeviceRole = .handheld
    }

    static let words = AccountWords(
        command: "devices", noun: "device", name: "id",
        abstract: "Register, revoke and list validators (devices).",
        add: "Register a device and print its bearer token (shown once; only its hash is kept).",
        addName: "The device id, e.g. the validator's serial number.",
        revoke: "Revoke a device: its token gets 401 from now on, and its unconfirmed first-use claims are withdrawn.",
        revokeDiscussion: """
            The first uses the device claimed are withdrawn unless another device confirmed them (by passing the \
            same ticket after it): gates forget them with their next sync, so that a stolen device's claims \
            refuse nobody. Each withdrawal is listed by `farecheck-server first-uses withdrawals`.
            """,
        revokeName: "The device id.",
        list: "List devices: id, state, role, registration time.")

    static func add(_ id: String, _ options: AddOptions, on store: any ServerStore) async throws -> (
        token: String, added: String
    ) {
        (try await store.registerDevice(id: id, role: options.role), "registered as a \(options.role)")
    }

    static func revoke(_ id: String, on store: any ServerStore) async throws -> [String]? {
        guard let revoked = try await store.revokeDevice(id: id, at: Date()) else { return nil }
        let count = revoked.withdrawn.count
        return ["\(count) first-use claim\(count == 1 ? "" : "s") withdrawn"]
    }

    static func list(on store: any ServerStore) async throws -> [AccountListing] {
        try await store.devices().map { device in
            AccountListing(
                name: device.id, revoked: device.revoked, createdAt: device.createdAt,
                fields: [(key: "role", value: device.role.rawValue)])
        }
    }
}

extension DeviceRole: ExpressibleByArgument {
    public init?(argument: String) {
        self.init(rawValue: argument.lowercased())
    }

    public static var allValueStrings: [String] { allCases.map(\.rawValue) }
}
