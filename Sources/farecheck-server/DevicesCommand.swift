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

        func run(on store: any ServerStore) async throws {
            let token = try await store.registerDevice(id: id)
            say(token)
            FileHandle.standardError.write(
                Data(
                    "farecheck-server: device \(PrintableText(id)) registered; the token above is not shown again.\n"
                        .utf8))
        }
    }

    /// `devices revoke ID`.
    struct Revoke: StoreCommand {
        static let configuration = CommandConfiguration(
            commandName: "revoke",
            abstract: "Revoke a device: its token gets 401 from now on.")

        @OptionGroup var database: DatabaseOptions

        @Argument(help: "The device id.")
        var id: String

        func run(on store: any ServerStore) async throws {
            guard try await store.revokeDevice(id: id) else {
                fail("There is no device \(id) (see `farecheck-server devices list`).")
            }
            say("device \(PrintableText(id)) revoked")
        }
    }

    /// `devices list`.
    struct List: StoreCommand {
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "List devices: id, state, registration time.")

        @OptionGroup var database: DatabaseOptions

        @Flag(help: "One JSON object per line.")
        var json = false

        func run(on store: any ServerStore) async throws {
            for device in try await store.devices() {
                let state = device.revoked ? "revoked" : "active"
                let created = device.createdAt.formatted(.iso8601)
                if json {
                    say(jsonLine(["id": device.id, "state": state, "createdAt": created]))
                } else {
                    say("\(PrintableText(device.id))\t\(state)\t\(created)")
                }
            }
        }
    }
}

/// One JSON object on one line, keys sorted, safe on a terminal (`terminalSafeJSON`).
func jsonLine(_ object: [String: Any]) -> String {
    guard
        let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
    else { return "{}" }
    return terminalSafeJSON(String(decoding: data, as: UTF8.self))
}
