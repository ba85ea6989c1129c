import ArgumentParser
import DaemonConfig
import FareCore
import Foundation
import Signatures
import SystemCalls
import TrustStore

/// `farecheck staff`: the inspectors who may log in on a handheld (inspector mode).
struct StaffCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "staff",
        abstract: "Manage the inspectors who may log in on this validator (staff id and PIN).",
        subcommands: [Add.self, List.self, Remove.self, Secret.self]
    )

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add",
            abstract: "Add an inspector, or set a new PIN for one (the PIN is read from standard input).",
            discussion: """
                The PIN is read from the first line of standard input (so it is not in the shell history or \
                the process list) and kept only as a salted scrypt hash (N=2^15, r=8, p=1) of the PIN keyed \
                with the PIN secret, a file kept apart from the store: --pin-secret, else the systemd credential \
                farecheck-pin-secret in $CREDENTIALS_DIRECTORY. The daemon must be given the same secret \
                ([inspector] pin_secret_file). Without a secret the hash is made all the same, with a warning: a \
                copy of the store is then enough to search the PIN offline.

                The PIN must have at least --min-pin-length characters (default 6).
                """
        )
        @Argument(help: "The staff id the inspector types.") var staffID: String
        @Option(help: "A display name.") var name: String?
        @Option(
            name: .customLong("pin-secret"),
            help: ArgumentHelp("The PIN secret file (see `farecheck staff secret`).", valueName: "path"))
        var pinSecret: String?
        @Option(name: .customLong("min-pin-length"), help: "The shortest PIN accepted.") var minimumLength = 6
        @Flag(help: "Make a new store when there is none at --db (else a path with no store is refused).")
        var create = false
        @OptionGroup var store: StoreOptions

        func validate() throws {
            guard (4...64).contains(minimumLength) else { throw ValidationError("--min-pin-length must be 4 to 64") }
            // A staff id is typed at a login and written into log lines: printable text only.
            guard !staffID.isEmpty, PrintableText.escaped(staffID) == staffID else {
                throw ValidationError("the staff id must be printable text (no control characters or backslashes)")
            }
        }

        func run() throws {
            let line = readLine(strippingNewline: true) ?? ""
            guard line.count >= minimumLength else {
                throw CommandFailure.exit(
                    "the PIN (first line of standard input) must have at least \(minimumLength) characters")
            }
            // Before the PIN is hashed: a path with no store is refused at once, and a refused PIN makes no store.
            let trustStore = try store.open(ifMissing: create ? .create : .refuse, offeringCreate: true)
            var secret: PINSecret?
            if let path = DaemonConfiguration.pinSecretPath(explicit: pinSecret) {
                do {
                    secret = try PINSecret(file: path)
                } catch {
                    throw CommandFailure.exit(error.message)
                }
            } else {
                printError(
                    "warning: no PIN secret (--pin-secret, or the systemd credential "
                        + "\(DaemonConfiguration.pinSecretCredential)): a copy of the store is enough to search this PIN "
                        + "offline")
            }
            let hash: PINHash
            do {
                hash = try PINHash(pin: line, secret: secret)
            } catch {
                throw CommandFailure.exit(readable(error))
            }
            do {
                try trustStore.saveStaff(StaffRecord(staffID: staffID, name: name, pin: hash))
            } catch {
                throw CommandFailure.exit(error.description)
            }
            printLine("staff \(staffID) saved")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "List the inspectors (never their PINs).")
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
                let kdf =
                    member.pin.function == .scrypt
                    ? "" : "  (PIN hash \(member.pin.function.rawValue): upgraded at next login)"
                printLine(
                    "\(PrintableText(member.staffID))\(member.name.map { "  \(PrintableText($0))" } ?? "")\(kdf)")
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "remove", abstract: "Remove an inspector.")
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
            printLine("staff \(staffID) removed (a running daemon ends their session within a second)")
        }
    }

    struct Secret: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "secret",
            abstract: "Create a PIN secret: 256 random bits in a new file readable by its owner only.",
            discussion: """
                Keep it apart from the store (e.g. /etc/farecheck/pin.secret, owned by the daemon's user, or a \
                systemd credential: LoadCredential=farecheck-pin-secret:/etc/farecheck/pin.secret) and give it to \
                the daemon ([inspector] pin_secret_file) and to `farecheck staff add --pin-secret`. Replacing it \
                makes every PIN hashed with the old one unusable until it is set again.
                """
        )
        @Option(help: ArgumentHelp("The file to create (it must not exist).", valueName: "path")) var out: String

        func run() throws {
            let text: String
            do {
                text = try PINSecret.generateText()
            } catch {
                throw CommandFailure.exit(error.message)
            }
            let descriptor: Int32
            do {
                descriptor = try systemCall { open(out, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600) }
            } catch {
                throw CommandFailure.exit("cannot create \(out): \(String(cString: strerror(error.rawValue)))")
            }
            defer { _ = try? systemCall(retryingOnInterrupt: false) { close(descriptor) } }
            _ = try? systemCall { fchmod(descriptor, 0o600) }
            let bytes = Array(text.utf8)
            let written: Int
            do {
                written = try systemCall { write(descriptor, bytes, bytes.count) }
            } catch {
                throw CommandFailure.exit("cannot write \(out): \(String(cString: strerror(error.rawValue)))")
            }
            guard written == bytes.count else {
                throw CommandFailure.exit("cannot write \(out): only \(written) of \(bytes.count) bytes were written")
            }
            printLine("PIN secret written to \(out) (mode 0600)")
        }
    }
}
