import ArgumentParser
import Foundation
import Signatures
import TrustStore

/// `farecheck staff`: the inspectors who may log in on a handheld (inspector mode).
struct StaffCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "staff",
        abstract: "Manage the inspectors who may log in on this validator (staff id and PIN).",
        subcommands: [Add.self, List.self, Remove.self]
    )

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add an inspector, or set a new PIN for one (the PIN is read from standard input).",
            discussion: """
                The PIN is read from the first line of standard input (so it is not in the shell history or \
                the process list) and kept only as a salted PBKDF2-SHA256 hash. It must be at least 4 digits \
                or characters.
                """
        )
        @Argument(help: "The staff id the inspector types.") var staffID: String
        @Option(help: "A display name.") var name: String?
        @OptionGroup var store: StoreOptions

        func run() throws {
            let line = readLine(strippingNewline: true) ?? ""
            guard line.count >= 4 else {
                throw CommandFailure.exit("the PIN (first line of standard input) must have at least 4 characters")
            }
            let hash: PINHash
            do {
                hash = try PINHash(pin: line)
            } catch {
                throw CommandFailure.exit("\(error)")
            }
            let trustStore = try store.open()
            do {
                try trustStore.saveStaff(StaffRecord(staffID: staffID, name: name, pin: hash))
            } catch {
                throw CommandFailure.exit(error.description)
            }
            printLine("staff \(staffID) saved")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the inspectors (never their PINs).")
        @OptionGroup var store: StoreOptions

        func run() throws {
            let trustStore = try store.open()
            let staff: [StaffRecord]
            do {
                staff = try trustStore.allStaff()
            } catch {
                throw CommandFailure.exit(error.description)
            }
            if staff.isEmpty { printLine("No staff registered.") }
            for member in staff {
                printLine("\(member.staffID)\(member.name.map { "  \($0)" } ?? "")")
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove an inspector.")
        @Argument(help: "The staff id.") var staffID: String
        @OptionGroup var store: StoreOptions

        func run() throws {
            let trustStore = try store.open()
            let removed: Bool
            do {
                removed = try trustStore.removeStaff(withID: staffID)
            } catch {
                throw CommandFailure.exit(error.description)
            }
            guard removed else { throw CommandFailure.exit("no staff member \(staffID)") }
            printLine("staff \(staffID) removed")
        }
    }
}
