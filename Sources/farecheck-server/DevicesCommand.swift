import ArgumentParser
import FareCore
import Foundation
import ValidationServer

/// `devices`: the validators allowed to call the API.
struct Devices: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract: "Register, revoke and list validators (devices).",
        subcommands: [Add.self, Revoke.self, List.self]
    )

    /// `devices add ID`.
    struct Add: StoreCommand {
        static let configuration = CommandConfiguration(
            commandName: "add",
            abstract: "Register a device and print its bearer token (shown once; only its hash is kept).")

        @OptionGroup var database: DatabaseOptions

        @Argument(help: "The device id, e.g. the validator's serial number.")
        var id: String

        @Option(
            help: ArgumentHelp(
                "gate (lets passengers through and claims the first use of single-use tickets for the fleet) or "
                    + "handheld (an inspector's: never claims).", valueName: "role"))
        var role: DeviceRole = .handheld

        func run(on store: any ServerStore) async throws {
            let token = try await store.registerDevice(id: id, role: role)
            say(token)
            FileHandle.standardError.write(
                Data(
                    ("farecheck-server: device \(PrintableText(id)) registered as a \(role); the token above is not "
                        + "shown again.\n").utf8))
        }
    }

    /// `devices revoke ID`.
    struct Revoke: StoreCommand {
        static let configuration = CommandConfiguration(
            commandName: "revoke",
            abstract:
                "Revoke a device: its token gets 401 from now on, and its unconfirmed first-use claims are withdrawn.",
            discussion: """
                The first uses the device claimed are withdrawn unless another device confirmed them (by passing the \
                same ticket after it): gates forget them with their next sync, so that a stolen device's claims \
                refuse nobody. Each withdrawal is listed by `farecheck-server first-uses withdrawals`.
                """)

        @OptionGroup var database: DatabaseOptions

        @Argument(help: "The device id.")
        var id: String

        func run(on store: any ServerStore) async throws {
            guard let revoked = try await store.revokeDevice(id: id, at: Date()) else {
                fail("There is no device \(PrintableText(id)) (see `farecheck-server devices list`).")
            }
            let count = revoked.withdrawn.count
            say(
                "device \(PrintableText(id)) revoked; \(count) first-use claim\(count == 1 ? "" : "s") withdrawn")
        }
    }

    /// `devices list`.
    struct List: StoreCommand {
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "List devices: id, state, role, registration time.")

        @OptionGroup var database: DatabaseOptions

        @Flag(help: "One JSON array, an object per record ([] for none).")
        var json = false

        func run(on store: any ServerStore) async throws {
            let list = JSONList()
            for device in try await store.devices() {
                let state = device.revoked ? "revoked" : "active"
                let created = device.createdAt.formatted(.iso8601)
                if json {
                    list.append(["id": device.id, "state": state, "role": device.role.rawValue, "createdAt": created])
                } else {
                    say("\(PrintableText(device.id))\t\(state)\t\(device.role)\t\(created)")
                }
            }
            if json { list.finish() }
        }
    }
}

extension DeviceRole: ExpressibleByArgument {
    public init?(argument: String) {
        self.init(rawValue: argument.lowercased())
    }

    public static var allValueStrings: [String] { allCases.map(\.rawValue) }
}
