import ArgumentParser
import FareCore
import Foundation
import Signatures
import TicketFormats
import ValidationAPI
import ValidationServer
import Verification

/// `keys`: the issuer keys the server publishes to validators in signed bundles.
struct Keys: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys",
        abstract: "Add, remove and list issuer keys; sign and publish them as a key bundle.",
        discussion: """
            Validators see a change of keys only after `keys publish`, which signs a new bundle (sequence one \
            above the last) with the trust anchor's private key.
            """,
        subcommands: [Add.self, Remove.self, List.self, Publish.self]
    )

    /// `keys add FILE`.
    struct Add: StoreCommand {
        static let configuration = CommandConfiguration(
            commandName: "add",
            abstract: "Add (or replace) an issuer key from a certificate or public key file (PEM or DER).",
            discussion: """
                --format vdv reads a VDV CA certificate instead (a CV certificate or its bare body, the files \
                `farecheck keys import --vdv` takes), named by its own holder reference (CHR, the key id) and its \
                CA reference (CAR, the issuer). --root pins it on validators as a root (a self-signed \
                certificate, e.g. EUVDV 10 01 06); otherwise it is a sub-CA, which must chain to a root added \
                here (a bare body only with --trust-unsigned). Validators accept a synced sub-CA only under a \
                root they hold or the same bundle carries; by signing the bundle, the agency vouches for bare \
                bodies as `--trust-unsigned` does on a validator.

                --format rsp6 reads a UK RSP6 key file (JSON, the file `farecheck keys import --rsp6` takes): an \
                issuer's array of {"n", "e"} (the issuer from --issuer or the file name, TT.json), or an object \
                keyed by issuer id of such arrays or of the published key list's entries. Each usable key is added \
                once with the list's validity, its id the first 12 hex digits of SHA-256 over its modulus; an \
                is_private entry, a key under 1024 bits, an unreadable entry and every is_test key are refused by \
                name (bundles carry no test keys: validators would trust them in service). A line per issuer says \
                how many keys were added and kept and how many entries refused.
                """)

        @OptionGroup var database: DatabaseOptions

        @Option(help: "The issuer the key signs for (FC1 issuer name, or UIC company code); not for vdv.")
        var issuer: String?

        @Option(help: "The key family: fc1, uic (UIC 918.3, UIC 918.9 DOSIPAS and ERA SSB keys), vdv or rsp6.")
        var format = "fc1"

        @Option(
            help: """
                The key id as tickets carry it; default: first 8 bytes of SHA-256 over the certificate (DER), \
                or over the public key (SPKI DER), in hex. Not for vdv (the certificate's CHR).
                """)
        var kid: String?

        @Option(help: "ES256, EdDSA, PS256 (FC1; default from the key), or the UIC key list's algorithm text.")
        var algorithm: String?

        @Option(
            name: .customLong("version-type"),
            help: "With --format uic: what the key signs, as the UIC key list's versionType says (TLB, FCB, DOS, SSB).")
        var versionType: String?

        @Option(
            name: .customLong("barcode-version"),
            help: """
                With --format uic: the barcode version the key signs, as the UIC key list's barcodeVersion says \
                (1 or 2: the #UT container version; 3 with FCB or DOS: DOSIPAS). Validators try a key only on the \
                barcodes its versionType and barcode version name (see docs/key-scope.md).
                """)
        var barcodeVersion: String?

        @Flag(help: "With --format vdv: pin the certificate on validators as a VDV root (it must be self-signed).")
        var root = false

        @Flag(
            name: .customLong("trust-unsigned"),
            help: "With --format vdv: accept a bare certificate body without a signature (the agency vouches for it).")
        var trustUnsigned = false

        @Option(
            name: .customLong("not-before"),
            help: ArgumentHelp(
                "First moment the key may sign; default: the certificate's.", discussion: TimeInput.optionHelp,
                valueName: "time"),
            transform: parseTime)
        var notBefore: TimeInput?

        @Option(
            name: .customLong("not-after"),
            help: ArgumentHelp(
                "Last moment the key may sign; default: the certificate's.", discussion: TimeInput.optionHelp,
                valueName: "time"),
            transform: parseTime)
        var notAfter: TimeInput?

        @Argument(help: "The certificate or public key file (a VDV CA certificate with --format vdv).")
        var file: String

        func run(on store: any ServerStore) async throws {
            if try Self.wireFormat(format) == KeyFamily.rsp6.wireName {
                return try await addRSP6Keys(to: store)
            }
            noteReading(of: notBefore, option: "--not-before")
            noteReading(of: notAfter, option: "--not-after")
            let isVDV = try Self.wireFormat(format) == KeyFamily.vdv.wireName
            let key = isVDV ? try vdvKey(roots: try await store.issuerKeys()) : try bundleKey()
            try await store.putIssuerKey(key, at: Date())
            let what =
                isVDV
                ? "VDV \(key.root ? "root" : "sub-CA") \(key.keyID) (CA \(key.issuer))"
                : "\(key.format) key \(key.keyID) of \(key.issuer) (\(key.algorithm ?? "no algorithm"))"
            say("added \(what); run `farecheck-server keys publish` to send it to validators")
        }

        func bundleKey() throws(ServerError) -> BundleKey {
            let wireFormat = try Self.wireFormat(format)
            if root || trustUnsigned {
                throw ServerError(code: .invalidInput, message: "--root and --trust-unsigned go with --format vdv.")
            }
            guard let issuer, !issuer.isEmpty else {
                throw ServerError(code: .invalidInput, message: "--issuer is required for --format \(format).")
            }
            let versionType = try checkedVersionType(wireFormat)
            let barcodeVersion = try checkedBarcodeVersion(wireFormat)
            let bytes = try readFile()
            let material: KeyMaterial
            do {
                material = try KeyMaterial(parsingKeyFile: bytes)
            } catch {
                throw ServerError(code: .invalidInput, message: "\(file): \(error.message)", cause: error)
            }
            let publicKey = material.publicKey
            let keyID: String
            if let kid {
                guard !kid.isEmpty else { throw ServerError(code: .invalidInput, message: "--kid is empty.") }
                keyID = wireFormat == KeyFamily.fc1.wireName ? (kid.lowercased()) : kid
            } else if let certificate = material.certificate {
                keyID = digest(.sha256, certificate.der).prefix(8).hexString
            } else {
                keyID = digest(.sha256, publicKey.spkiDER).prefix(8).hexString
            }
            return BundleKey(
                format: wireFormat, issuer: IssuerID(issuer), keyID: KeyID(keyID),
                algorithm: algorithm
                    ?? (wireFormat == KeyFamily.fc1.wireName ? Self.fc1Algorithm(of: publicKey.kind) : nil),
                spki: publicKey.spkiDER,
                notBefore: notBefore?.date ?? material.certificate?.notBefore,
                notAfter: notAfter?.date ?? material.certificate?.notAfter,
                versionType: versionType, barcodeVersion: barcodeVersion)
        }

        /// A VDV CA certificate as a bundle key, checked by the rules `farecheck keys import --vdv-root` and
        /// `--vdv` apply: a root must be self-signed; a sub-CA must chain to one of the roots among `roots` (the
        /// server's keys), or with `--trust-unsigned` be a bare body (naming such a root when there is one).
        func vdvKey(roots: [BundleKey]) throws(ServerError) -> BundleKey {
            if issuer != nil || kid != nil || algorithm != nil || versionType != nil || barcodeVersion != nil
                || notBefore != nil || notAfter != nil
            {
                throw ServerError(
                    code: .invalidInput,
                    message: "A VDV certificate names itself (CHR), its CA (CAR) and its end date: leave out --issuer, "
                        + "--kid, --algorithm, --version-type, --barcode-version, --not-before and --not-after.")
            }
            let bytes = try readFile()
            let authority: VDVAuthority
            do throws(VDVImportError) {
                if root {
                    if trustUnsigned {
                        throw VDVImportError("--trust-unsigned is for sub-CAs; a root is pinned by value")
                    }
                    authority = try VDVCertificateImport.root(bytes)
                } else {
                    let anchors = roots.filter { $0.format == KeyFamily.vdv.wireName && $0.root }.compactMap {
                        $0.certificate.flatMap { try? VDVCertificateImport.root($0) }
                    }
                    authority = try VDVCertificateImport.subCA(
                        bytes, underAnyOf: anchors, trustUnsigned: trustUnsigned, rootlessIfUnsigned: true)
                }
            } catch {
                let hint =
                    root
                    ? ""
                    : " (add a root with `farecheck-server keys add --format vdv --root FILE`; a bare body "
                        + "needs --trust-unsigned)"
                throw ServerError(code: .invalidInput, message: "\(file): \(error.message)\(hint).", cause: error)
            }
            let spki: [UInt8]
            do {
                spki = try authority.key.publicKey().spkiDER
            } catch {
                throw ServerError(
                    code: .invalidInput, message: "\(file): the certificate's RSA key cannot be used: \(error.message)",
                    cause: error)
            }
            return BundleKey(
                format: KeyFamily.vdv.wireName, issuer: IssuerID(authority.certificate.authority.bytes.hexString),
                keyID: KeyID(authority.reference.bytes.hexString), algorithm: nil, spki: spki,
                notAfter: authority.certificate.expiry?.end, certificate: bytes, root: root)
        }

        /// Adds the keys of an RSP6 key file, entry by entry as `farecheck keys import --rsp6` does, except test
        /// keys: a bundle entry has no field that marks a key as a test key, and validators would trust one in
        /// service, so they are refused by name. Fails only when no key of the file can be added.
        func addRSP6Keys(to store: any ServerStore) async throws {
            let read = try rsp6Plan()
            var plan = read
            plan.refuseTestKeys()
            let rsp6 = KeyFamily.rsp6.wireName
            let held = try await store.issuerKeys().filter { $0.format == rsp6 }
            let heldIDs = Set(held.map { "\($0.issuer)/\($0.keyID)" })
            for refusal in plan.refusals {
                FileHandle.standardError.write(Data("farecheck-server: \(file): refused \(refusal)\n".utf8))
            }
            // A test key published earlier as a live one (from a file of the {"n", "e"} form) stays until removed:
            // said, so that the operator withdraws it.
            let testKeys = read.keys.filter { $0.trusted.purpose == .testTickets }
            for key in testKeys.map(\.trusted) where heldIDs.contains("\(key.issuer)/\(key.keyID)") {
                FileHandle.standardError.write(
                    Data(
                        ("farecheck-server: warning: rsp6 key \(key.keyID) of \(key.issuer) is a test key, but this "
                            + "server publishes it as a live key from an earlier file: remove it (keys remove --format "
                            + "rsp6 --issuer \(key.issuer) --kid \(key.keyID)) and publish\n").utf8))
            }
            guard !plan.keys.isEmpty else {
                throw ServerError(
                    code: .invalidInput,
                    message: "\(file): no key of the file can be added (\(plan.refusals.count) entries refused).")
            }
            let now = Date()
            for key in plan.keys.map(\.trusted) {
                try await store.putIssuerKey(
                    BundleKey(
                        format: rsp6, issuer: key.issuer, keyID: key.keyID, algorithm: key.algorithm,
                        spki: key.publicKey.spkiDER, notBefore: key.notBefore, notAfter: key.notAfter),
                    at: now)
                let verb = heldIDs.contains("\(key.issuer)/\(key.keyID)") ? "kept" : "added"
                say("\(verb) rsp6 key \(key.keyID) of \(key.issuer) (\(key.algorithm ?? "RSA"))")
            }
            let summary = RSP6KeyImportSummary(plan: plan) { heldIDs.contains("\($0.issuer)/\($0.keyID)") }
            for line in summary.lines { say("  \(line)") }
            let total = summary.total
            say(
                "RSP6 keys \(file): \(total.added) added, \(total.kept) kept, \(total.refused) refused; run "
                    + "`farecheck-server keys publish` to send them to validators")
        }

        /// What the RSP6 key file gives, entry by entry.
        func rsp6Plan() throws(ServerError) -> RSP6KeyImportPlan {
            if kid != nil || algorithm != nil || versionType != nil || barcodeVersion != nil || root || trustUnsigned
                || notBefore != nil || notAfter != nil
            {
                throw ServerError(
                    code: .invalidInput,
                    message: "An RSP6 key file names its keys: give --format rsp6 with the file, and --issuer for an "
                        + "issuer's array not named by its file.")
            }
            if let issuer, !RSP6KeyFile.isIssuerID(issuer.uppercased()) {
                throw ServerError(
                    code: .invalidInput, message: "--issuer \(issuer): an RSP6 issuer id is two letters or digits.")
            }
            return RSP6KeyImportPlan(try rsp6Entries())
        }

        /// The entries of the RSP6 key file.
        func rsp6Entries() throws(ServerError) -> [RSP6KeyFileEntry] {
            do {
                return try RSP6KeyFile.entries(
                    parsing: try readFile(), issuer: issuer?.uppercased() ?? RSP6KeyFile.issuer(fromFileName: file))
            } catch let error as FormatError {
                throw ServerError(code: .invalidInput, message: "\(file): \(error.message).", cause: error)
            } catch let error as ServerError {
                throw error
            } catch {
                throw ServerError(code: .invalidInput, message: "\(file): \(error)", cause: error)
            }
        }

        /// `--version-type`, checked: UIC only, one word.
        func checkedVersionType(_ wireFormat: String) throws(ServerError) -> String? {
            guard let versionType else { return nil }
            guard wireFormat == KeyFamily.uic.wireName else {
                throw ServerError(code: .invalidInput, message: "--version-type goes with --format uic.")
            }
            let trimmed = versionType.trimmingCharacters(in: .whitespaces)
            guard !trimmed.isEmpty, trimmed.count <= 16, !trimmed.contains(where: \.isWhitespace) else {
                throw ServerError(
                    code: .invalidInput, message: "--version-type \(versionType): expected a word such as DOS or FCB.")
            }
            return trimmed
        }

        /// `--barcode-version`, checked: UIC only, a small number.
        func checkedBarcodeVersion(_ wireFormat: String) throws(ServerError) -> String? {
            guard let barcodeVersion else { return nil }
            guard wireFormat == KeyFamily.uic.wireName else {
                throw ServerError(code: .invalidInput, message: "--barcode-version goes with --format uic.")
            }
            guard let number = Int(barcodeVersion), (1...99).contains(number) else {
                throw ServerError(
                    code: .invalidInput,
                    message: "--barcode-version \(barcodeVersion): expected a number such as 1 or 2.")
            }
            return String(number)
        }

        private func readFile() throws(ServerError) -> [UInt8] {
            guard let bytes = FileManager.default.contents(atPath: file) else {
                throw ServerError(code: .invalidInput, message: "Cannot read the key file \(file).")
            }
            return Array(bytes)
        }

        static func wireFormat(_ name: String) throws(ServerError) -> String {
            guard let family = KeyFamily(name: name) else {
                throw ServerError(code: .invalidInput, message: "--format \(name): expected fc1, uic, vdv or rsp6.")
            }
            return family.wireName
        }

        static func fc1Algorithm(of kind: KeyKind) -> String? {
            switch kind {
            case .ecP256: "ES256"
            case .ed25519: "EdDSA"
            case .rsa: "PS256"
            default: nil
            }
        }
    }

    /// `keys remove`.
    struct Remove: StoreCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove",
            abstract: "Remove an issuer key from the next bundle (revoke it too, to stop validators trusting it now).")

        @OptionGroup var database: DatabaseOptions

        @Option(help: "The issuer (not needed for vdv: a VDV certificate is found by its CHR).")
        var issuer: String?

        @Option(help: "fc1, uic, vdv or rsp6.")
        var format = "fc1"

        @Option(help: "The key id (for vdv the certificate's CHR, 16 hex digits).")
        var kid: String

        func run(on store: any ServerStore) async throws {
            let wireFormat = try Add.wireFormat(format)
            let isVDV = wireFormat == KeyFamily.vdv.wireName
            let keyID = isVDV ? kid.lowercased() : kid
            let issuers: [String]
            if let issuer {
                issuers = [isVDV ? issuer.lowercased() : issuer]
            } else if isVDV {
                issuers = try await store.issuerKeys().filter { $0.format == wireFormat && $0.keyID.rawValue == keyID }
                    .map(\.issuer.rawValue)
            } else {
                fail("--issuer is required for --format \(format).")
            }
            var removed: [KeyReference] = []
            for issuer in issuers {
                let reference = KeyReference(format: wireFormat, issuer: IssuerID(issuer), keyID: KeyID(keyID))
                if try await store.removeIssuerKey(reference) { removed.append(reference) }
            }
            guard !removed.isEmpty else {
                let of = issuer.map { " of \($0)" } ?? ""
                fail("There is no \(wireFormat) key \(kid)\(of) (see `farecheck-server keys list`).")
            }
            for reference in removed {
                say(
                    "removed \(reference.format) key \(reference.keyID) of \(reference.issuer); "
                        + "run `farecheck-server keys publish`")
            }
        }
    }

    /// `keys list`.
    struct List: StoreCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "List issuer keys, and the sequence of the bundle last published.")

        @OptionGroup var database: DatabaseOptions

        @Flag(help: "One JSON array, an object per record ([] for none).")
        var json = false

        func run(on store: any ServerStore) async throws {
            let list = JSONList()
            defer { if json { list.finish() } }
            for key in try await store.issuerKeys() {
                if json {
                    var object: [String: Any] = [
                        "format": key.format, "issuer": key.issuer, "keyID": key.keyID,
                        "spki": Data(key.spki).base64EncodedString(),
                    ]
                    object["algorithm"] = key.algorithm
                    object["notBefore"] = key.notBefore?.formatted(.iso8601)
                    object["notAfter"] = key.notAfter?.formatted(.iso8601)
                    object["versionType"] = key.versionType
                    object["certificate"] = key.certificate.map { Data($0).base64EncodedString() }
                    if key.format == KeyFamily.vdv.wireName { object["root"] = key.root }
                    list.append(object)
                } else {
                    // The fifth column: the UIC versionType, or for VDV whether validators pin it as a root.
                    let kind = key.format == KeyFamily.vdv.wireName ? (key.root ? "root" : "sub-CA") : key.versionType
                    let columns = [
                        key.format, key.issuer.rawValue, key.keyID.rawValue, key.algorithm ?? "-", kind ?? "-",
                    ]
                    say(columns.map { PrintableText.escaped($0) }.joined(separator: "\t"))
                }
            }
            if !json {
                let sequence = try await store.latestBundle()?.sequence
                FileHandle.standardError.write(
                    Data("published bundle: \(sequence.map(String.init) ?? "none")\n".utf8))
            }
        }
    }

    /// `keys publish --anchor-key PATH`.
    struct Publish: StoreCommand {
        static let configuration = CommandConfiguration(
            commandName: "publish",
            abstract: "Sign every issuer key into a new key bundle with the trust anchor's key, and publish it.")

        @OptionGroup var database: DatabaseOptions

        @Option(name: .customLong("anchor-key"), help: "The trust anchor's private key (PEM).")
        var anchorKey: String

        @Flag(
            name: .customLong("allow-empty"),
            help: "Publish even with no issuer keys (validators then drop every synced key).")
        var allowEmpty = false

        func run(on store: any ServerStore) async throws {
            let key = try readAnchorKey(anchorKey)
            if try await store.issuerKeys().isEmpty && !allowEmpty {
                fail(
                    "There are no issuer keys: an empty bundle makes validators drop every synced key. Add keys "
                        + "with `farecheck-server keys add`, or pass --allow-empty if that is what you want.")
            }
            let bundle = try await store.publishBundle(signedBy: key)
            say(
                "published key bundle \(bundle.sequence) with \(bundle.keys.count) keys, signed by anchor "
                    + TrustAnchor.id(of: key.publicKey))
        }
    }
}
