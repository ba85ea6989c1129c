import ArgumentParser
import CommandLineSupport
import FareCore
import Foundation
import Issuing
import Signatures
import TicketFormats
import TrustStore
import Verification

/// `farecheck keys`: the trusted keys in the store.
struct KeysCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys",
        abstract: "Manage trusted keys: generate, import, list, remove.",
        subcommands: [Generate.self, Import.self, List.self, Remove.self]
    )

    struct Generate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "generate",
            abstract: "Create a signing key pair: the private key goes to a file, the public key into the store.",
            discussion:
                "The key id (kid) is the first 8 bytes of SHA-256 over the public key (DER SubjectPublicKeyInfo), printed in hex."
        )

        @Option(help: "The issuer the key signs for, e.g. demo-transit.") var issuer: String
        @Option(help: "ES256, EdDSA or PS256.") var alg: String = "ES256"
        @Option(help: "Where to write the private key (PEM, mode 0600).") var out: String
        @Flag(help: "Overwrite an existing key file.") var force = false
        @OptionGroup var validity: KeyValidityOptions
        var notBefore: TimeInput? { validity.notBefore }
        var notAfter: TimeInput? { validity.notAfter }
        @Option(
            help: """
                What the key signs: tickets, staff-badge (badges that log an inspector in) or test-tickets (a test \
                key: no ticket valid unless verification accepts test keys).
                """)
        var purpose: KeyPurpose = .tickets
        @OptionGroup var store: StoreOptions

        func run() throws {
            guard let algorithm = COSEAlgorithm(name: alg) else {
                throw ValidationError("--alg must be ES256, EdDSA or PS256, not \(alg)")
            }
            validity.noteReadings()
            if FileManager.default.fileExists(atPath: out), !force {
                throw CommandFailure.exit("\(out) exists; pass --force to overwrite it")
            }
            let trustStore = try store.open(ifMissing: .create)
            let privateKey: PrivateKey
            do {
                privateKey = try PrivateKey.generate(IssuingKey.kind(for: algorithm))
            } catch {
                throw CommandFailure.exit("cannot generate the key: \(readable(error))")
            }
            let spki = privateKey.publicKey.spkiDER
            let kid = IssuingKey.keyID(forSPKI: spki)
            let file = IssuingKey(privateKey: privateKey, issuer: issuer, keyID: kid, algorithm: algorithm)
            do {
                try file.write(to: out)
            } catch {
                throw CommandFailure.exit("cannot write \(out): \(error)")
            }
            do {
                try trustStore.saveKey(
                    KeyRecord(
                        family: .fc1, issuer: IssuerID(issuer), keyID: KeyID(kid.hexString), algorithm: algorithm.name,
                        spki: spki,
                        notBefore: notBefore?.date, notAfter: notAfter?.date, source: "generated", purpose: purpose
                    ))
            } catch {
                throw CommandFailure.exit(error.description)
            }
            printLine(
                "kid \(kid.hexString) (\(algorithm.name), issuer \(issuer)\(purpose.note)); private key written to \(out); public key stored in \(trustStore.path)"
            )
        }
    }

    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "import",
            abstract: "Trust public keys: a certificate or public key file, or the UIC public key list.",
            discussion: """
                FILE is a PEM or DER X.509 certificate, or a PEM/DER public key (SPKI). An issuer that is a \
                numeric RICS code (e.g. 1080) makes it a UIC 918.3 key, with --kid the key id as the ticket \
                header writes it (00001); otherwise an FC1 key, --kid in hex. Without --kid, an FC1 \
                certificate's kid is the first 8 bytes of SHA-256 over its DER; a bare public key's is the \
                first 8 bytes of SHA-256 over its SubjectPublicKeyInfo. A certificate's own validity is the \
                key's validity unless --not-before/--not-after say otherwise.

                --uic-xml FILE imports the UIC key list (the XML the UIC publishes): every good key with its \
                issuer code, id, algorithm, validity and version type; each bad entry is reported by issuer \
                and id. A re-import updates keys in place and removes none unless --replace is given.

                VDV-KA (the VDV PKI): --vdv-root FILE pins a root certificate (the EUVDV root; a CV certificate \
                or its bare body, self-signed) as a trust anchor. --vdv FILE... imports sub-CA certificates \
                (DEVDV…): a signed certificate (5F37) is accepted only if it recovers under a pinned root; a bare \
                body whose signature was already removed is accepted only with --trust-unsigned, by which the \
                operator vouches for it. Certificates are known by their own holder reference (CHR), never by \
                the file name.

                UK National Rail (RSP6): --rsp6 FILE.json imports issuers' published keys: a JSON array of \
                {"n", "e"} (base64) whose issuer is --issuer or the file name (TT.json), or one object keyed by \
                issuer id ({"TT": [...], ...}; with --issuer only that issuer's), whose entries are {"n", "e"} or \
                the key list the open decoders share ({"issuer_id", "modulus_hex", "public_exponent_hex", \
                "valid_from", "valid_until", "is_test", "is_private", "public_key_x509"}). valid_from and \
                valid_until (UK time) become the key's validity; an is_test key is stored as a test key, which \
                makes no ticket valid unless verification accepts test keys (verify --test-keys); an is_private \
                entry, a key under 1024 bits and an entry that cannot be read are refused by name, and the others \
                imported; a key listed twice is stored once. Each key's id is the first 12 hex digits of SHA-256 \
                over its modulus, so a second import of the file adds nothing. A line per issuer says how many keys \
                were added and kept and how many entries refused; the exit status is 0 unless no key could be used.

                --purpose staff-badge trusts an FC1 key for staff badges only: a badge (product staff-badge) \
                logs an inspector in only when it is signed by such a key and names an inspector in the staff \
                list, and such a key never makes a passenger's ticket valid. Every other key is a ticket key.
                """
        )

        @Argument(help: "The certificate or public key file.") var file: String?
        @Option(name: .customLong("uic-xml"), help: "The UIC public key list (XML).") var uicXML: String?
        @Option(name: .customLong("vdv-root"), help: "A VDV root certificate to pin (CV certificate or bare body).")
        var vdvRoot: String?
        @Option(
            name: .customLong("vdv"), parsing: .upToNextOption,
            help: "VDV sub-CA certificates (CV certificates or bare bodies) to accept under a pinned root.")
        var vdvCertificates: [String] = []
        @Flag(
            name: .customLong("trust-unsigned"),
            help: "With --vdv: accept bare certificate bodies without a signature (the operator vouches for them).")
        var trustUnsigned = false
        @Option(
            name: .customLong("rsp6"),
            help: """
                UK RSP6 issuer keys (JSON: an issuer's array of {n, e}, or an object keyed by issuer id of such \
                arrays or of the published key list's entries).
                """)
        var rsp6: String?
        @Flag(help: "With --uic-xml: remove UIC keys the list no longer has.") var replace = false
        @Option(help: "The issuer the key signs for (an FC1 issuer name, or a UIC RICS code).") var issuer: String?
        @Option(help: "The key id as tickets carry it (hex for FC1; as the header writes it for UIC).") var kid: String?
        @Option(help: "ES256, EdDSA or PS256 for FC1; the algorithm text (e.g. SHA256withDSA) for UIC.") var alg:
            String?
        @OptionGroup var validity: KeyValidityOptions
        var notBefore: TimeInput? { validity.notBefore }
        var notAfter: TimeInput? { validity.notAfter }
        @Option(
            name: .customLong("version-type"),
            help: """
                For a UIC key: what it signs, as the UIC key list's versionType says (TLB, FCB, DOS, SSB). Without \
                it (and --barcode-version) the key is tried on every UIC barcode its algorithm fits.
                """)
        var versionType: String?
        @Option(
            name: .customLong("barcode-version"),
            help: "For a UIC key: the barcode version it signs, as the key list's barcodeVersion says (1, 2, 3).")
        var barcodeVersion: String?
        @Option(
            help: """
                What the key signs: tickets (default), staff-badge or test-tickets (FC1 keys only; a test key makes \
                no ticket valid unless verification accepts test keys).
                """)
        var purpose: KeyPurpose = .tickets
        @OptionGroup var store: StoreOptions
        @OptionGroup var progressOptions: ProgressOptions

        func validate() throws {
            if versionType != nil || barcodeVersion != nil {
                guard file != nil, let issuer, UICKeyList.isRICSCode(issuer) else {
                    throw ValidationError(
                        "--version-type and --barcode-version scope a UIC key file (with a RICS code as --issuer)")
                }
                if let barcodeVersion, Int(barcodeVersion) == nil {
                    throw ValidationError("--barcode-version must be a number such as 1 or 2, not \(barcodeVersion)")
                }
            }
            if vdvRoot != nil || !vdvCertificates.isEmpty {
                guard file == nil, uicXML == nil, rsp6 == nil else {
                    throw ValidationError("--vdv-root and --vdv import VDV certificates; give them without a key FILE")
                }
                return
            }
            if trustUnsigned { throw ValidationError("--trust-unsigned goes with --vdv") }
            if rsp6 != nil {
                guard file == nil, uicXML == nil, kid == nil, alg == nil, notBefore == nil, notAfter == nil,
                    purpose == .tickets, !replace
                else {
                    throw ValidationError(
                        "--rsp6 FILE takes the keys, their issuer (--issuer or the file's name) and their ids from "
                            + "the file; give it alone, or with --issuer")
                }
                if let issuer, !RSP6KeyFile.isIssuerID(issuer.uppercased()) {
                    throw ValidationError("--issuer \(issuer): an RSP6 issuer id is two letters or digits, e.g. TT")
                }
                return
            }
            guard (file == nil) != (uicXML == nil) else {
                throw ValidationError("give a key FILE, --uic-xml FILE, --rsp6 FILE or --vdv-root/--vdv FILES")
            }
            if file != nil, issuer == nil { throw ValidationError("importing a key file needs --issuer") }
            if replace, uicXML == nil { throw ValidationError("--replace goes with --uic-xml") }
            if purpose != .tickets, file == nil || issuer.map(UICKeyList.isRICSCode) == true {
                throw ValidationError("--purpose \(purpose.rawValue) is for an FC1 key FILE only")
            }
        }

        /// A numeric issuer of up to four digits is a UIC RICS company code.
        func run() throws {
            validity.noteReadings()
            if vdvRoot != nil || !vdvCertificates.isEmpty { return try importVDV() }
            if let uicXML { return try importKeyList(uicXML) }
            if let rsp6 { return try importRSP6(rsp6) }
            guard let file, let issuer else { return }
            let bytes = try readFile(file)
            let material: KeyMaterial
            do {
                material = try KeyMaterial(parsingKeyFile: bytes)
            } catch {
                throw CommandFailure.exit("\(file): \(readable(error))")
            }
            let record =
                try UICKeyList.isRICSCode(issuer)
                ? uicRecord(material, issuer: issuer) : fc1Record(material, issuer: issuer)
            let trustStore = try store.open(ifMissing: .create)
            do {
                try trustStore.saveKey(record)
            } catch {
                throw CommandFailure.exit(error.description)
            }
            printLine(
                "\(record.family) key \(record.keyID) (\(record.algorithm ?? "?"), issuer \(record.issuer)\(record.purpose.note)) imported from \(file)"
            )
        }

        private func fc1Record(_ material: KeyMaterial, issuer: String) throws -> KeyRecord {
            let keyID: [UInt8]
            if let kid {
                guard let parsed = [UInt8](hex: kid), !parsed.isEmpty else {
                    throw ValidationError("--kid must be hex, e.g. 0a1b2c3d4e5f6071")
                }
                keyID = parsed
            } else if let certificate = material.certificate {
                keyID = Array(digest(.sha256, certificate.der).prefix(8))
            } else {
                keyID = IssuingKey.keyID(forSPKI: material.publicKey.spkiDER)
            }
            let algorithm: String
            if let alg {
                guard let named = COSEAlgorithm(name: alg) else {
                    throw ValidationError("--alg must be ES256, EdDSA or PS256, not \(alg)")
                }
                algorithm = named.name
            } else if let derived = IssuingKey.algorithm(for: material.publicKey.kind) {
                algorithm = derived.name
            } else {
                throw CommandFailure.exit(
                    "\(file ?? ""): a \(material.publicKey.kind) key cannot sign FC1 tickets (ES256, EdDSA, PS256); for a UIC key give the RICS code as --issuer"
                )
            }
            return KeyRecord(
                family: .fc1, issuer: IssuerID(issuer), keyID: KeyID(keyID.hexString), algorithm: algorithm,
                spki: material.publicKey.spkiDER, certificate: material.certificate?.der,
                notBefore: notBefore?.date ?? material.certificate?.notBefore,
                notAfter: notAfter?.date ?? material.certificate?.notAfter,
                source: ((file ?? "") as NSString).lastPathComponent, purpose: purpose
            )
        }

        private func uicRecord(_ material: KeyMaterial, issuer: String) throws -> KeyRecord {
            guard let kid, !kid.isEmpty, kid.count <= 5 else {
                throw ValidationError("a UIC key needs --kid, the key id as the ticket header writes it (e.g. 00001)")
            }
            switch material.publicKey.kind {
            case .dsa, .ecP256: break
            default:
                throw CommandFailure.exit(
                    "\(file ?? ""): a \(material.publicKey.kind) key does not sign UIC 918.3 tickets (DSA or ECDSA P-256)"
                )
            }
            // Scoped by hand like a key list entry when either is given; else tried on every barcode it fits.
            let scoped = versionType != nil || barcodeVersion != nil
            return KeyRecord(
                family: .uic, issuer: UICKeyList.normalizedCode(IssuerID(issuer)),
                keyID: KeyID(UICKeyList.normalizedCode(kid)),
                algorithm: alg, spki: material.publicKey.spkiDER, certificate: material.certificate?.der,
                notBefore: notBefore?.date ?? material.certificate?.notBefore,
                notAfter: notAfter?.date ?? material.certificate?.notAfter,
                source: ((file ?? "") as NSString).lastPathComponent,
                versionType: scoped ? (versionType ?? "") : nil, barcodeVersion: scoped ? (barcodeVersion ?? "") : nil
            )
        }

        /// Pins the VDV root, then accepts each sub-CA under the pinned roots; every file is reported, and a
        /// refused one makes the command fail after the others were tried.
        private func importVDV() throws {
            let trustStore = try store.open(ifMissing: .create)
            if let vdvRoot {
                let root: VDVAuthority
                do {
                    root = try VDVCertificateImport.root(try readFile(vdvRoot))
                    try trustStore.saveVDVAuthority(root, source: (vdvRoot as NSString).lastPathComponent)
                } catch let error as VDVImportError {
                    throw CommandFailure.exit("\(vdvRoot): \(error.message)")
                } catch let error as StoreError {
                    throw CommandFailure.exit(error.description)
                }
                printLine("pinned VDV root \(root.summary) from \(vdvRoot)")
            }
            var refused = 0
            for path in vdvCertificates {
                let bytes = try readFile(path)
                var lastError = "no VDV root is pinned; pin one with --vdv-root first"
                var accepted: VDVAuthority?
                do {
                    let roots = try trustStore.pinnedVDVRoots()
                    if !roots.isEmpty || trustUnsigned {
                        do {
                            accepted = try VDVCertificateImport.subCA(
                                bytes, underAnyOf: roots, trustUnsigned: trustUnsigned, rootlessIfUnsigned: true)
                        } catch {
                            lastError = error.message
                        }
                    }
                    if let accepted {
                        try trustStore.saveVDVAuthority(accepted, source: (path as NSString).lastPathComponent)
                    }
                } catch {
                    throw CommandFailure.exit(error.description)
                }
                if let accepted {
                    printLine("accepted VDV certificate \(accepted.summary) from \(path)")
                } else {
                    refused += 1
                    printError("farecheck: \(path): refused: \(lastError)")
                }
            }
            if refused > 0 {
                throw CommandFailure.exit("\(refused) of \(vdvCertificates.count) VDV certificates refused")
            }
        }

        /// Imports an RSP6 key file, entry by entry: each usable key is stored once (with the list's validity, a
        /// test key as one), each refused entry is named; fails only when no key of the file can be used.
        private func importRSP6(_ path: String) throws {
            let bytes = try readFile(path)
            let plan: RSP6KeyImportPlan
            do {
                plan = RSP6KeyImportPlan(
                    try RSP6KeyFile.entries(
                        parsing: bytes, issuer: issuer?.uppercased() ?? RSP6KeyFile.issuer(fromFileName: path)))
            } catch {
                throw CommandFailure.exit("\(path): \(error.message)")
            }
            for refusal in plan.refusals { printError("farecheck: \(path): refused \(refusal)") }
            guard !plan.keys.isEmpty else {
                throw CommandFailure.exit(
                    "\(path): no key of the file can be used (\(plan.refusals.count) entries refused)")
            }
            let source = (path as NSString).lastPathComponent
            let records = plan.keys.map { key in
                let trusted = key.trusted
                return KeyRecord(
                    family: .rsp6, issuer: trusted.issuer, keyID: trusted.keyID, algorithm: trusted.algorithm,
                    spki: trusted.publicKey.spkiDER, notBefore: trusted.notBefore, notAfter: trusted.notAfter,
                    source: source, purpose: trusted.purpose)
            }
            let trustStore = try store.open(ifMissing: .create)
            let held: Set<KeyRecord.Identity>
            do {
                held = try trustStore.saveKeysNotingHeld(records)
            } catch {
                throw CommandFailure.exit(error.description)
            }
            let heldKeys = Set(held.map { "\($0.issuer)/\($0.keyID)" })
            let summary = RSP6KeyImportSummary(plan: plan) { heldKeys.contains("\($0.issuer)/\($0.keyID)") }
            for line in summary.lines { printLine("  \(line)") }
            let total = summary.total
            printLine(
                "RSP6 keys \(path): \(total.added) added, \(total.kept) kept, \(total.refused) refused"
                    + (total.test > 0
                        ? "; \(total.test) test \(total.test == 1 ? "key" : "keys"), not trusted in service "
                            + "(verify --test-keys, [verification] accept_test_keys)" : ""))
        }

        private func importKeyList(_ path: String) throws {
            let list: UICKeyList
            do {
                list = try UICKeyList.parse(xml: try readFile(path))
            } catch let error as FormatError {
                throw CommandFailure.exit("\(path): not a UIC key list: \(error.message)")
            }
            let trustStore = try store.open(ifMissing: .create)
            let report: UICKeyImportReport
            let progress = progressOptions.reporter("UIC key list")
            do {
                report = try trustStore.importUICKeyList(
                    list, replace: replace, source: (path as NSString).lastPathComponent
                ) { done, total in progress.step(done: done, of: total, "keys read") }
            } catch {
                progress.abandon()
                throw CommandFailure.exit(error.description)
            }
            progress.finish(count: list.entries.count, "keys")
            for problem in report.problems {
                printError("farecheck: skipped \(problem)")
            }
            var summary = "UIC key list \(path): \(report.added) added, \(report.updated) updated"
            if replace { summary += ", \(report.removed) removed" }
            summary += ", \(report.problems.count) skipped"
            printLine(summary)
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "Show the trusted keys.")

        @Flag(help: "One JSON array, an object per key ([] for none).") var json = false
        @OptionGroup var store: StoreOptions

        struct Row: Encodable {
            var format: String
            var issuer: String
            var issuerName: String?
            var versionType: String?
            /// UIC: the key list's barcodeVersion.
            var barcodeVersion: String?
            /// UIC: the key list marks the key as forged.
            var forged: Bool?
            /// UIC: the product owners the key may sign for.
            var allowedProductOwnerCodes: [String]?
            /// UIC: which barcodes the key is tried on, and how a failure counts (see docs/key-scope.md).
            var scope: String?
            var keyId: String
            var algorithm: String?
            var keyType: String
            var notBefore: Date?
            var notAfter: Date?
            var source: String
            var revoked: Bool
            var purpose: String
        }

        func run() throws {
            let trustStore = try store.open()
            let (records, revoked): ([KeyRecord], [KeyRevocationRecord])
            do {
                records = try trustStore.keys()
                revoked = try trustStore.keyRevocations()
            } catch {
                throw CommandFailure.exit(error.description)
            }
            let authorities: [VDVAuthorityRecord]
            do {
                authorities = try trustStore.vdvAuthorities()
            } catch {
                throw CommandFailure.exit(error.description)
            }
            let revokedSet = Set(revoked.map { "\($0.family)/\($0.issuer)/\($0.keyID)" })
            let vdvRows = authorities.map { record in
                let authority = try? record.authority()
                let trusted = authority.map { "\($0.origin)" } ?? record.origin
                return Row(
                    format: KeyFamily.vdv.storeName, issuer: authority?.reference.description ?? record.reference,
                    issuerName: nil, versionType: trusted, keyId: record.reference, algorithm: "ISO 9796-2 RSA SHA-1",
                    keyType: authority.map { "RSA \($0.key.bits)" } ?? "unreadable", notBefore: nil,
                    notAfter: authority?.certificate.expiry?.end, source: record.source, revoked: false,
                    purpose: KeyPurpose.tickets.rawValue)
            }
            let rows =
                vdvRows
                + records.map { record in
                    let publicKey = try? PublicKey(spkiDER: record.spki)
                    let isUIC = record.family == .uic
                    return Row(
                        format: record.family.storeName, issuer: record.issuer.rawValue, issuerName: record.issuerName,
                        versionType: record.versionType, barcodeVersion: record.barcodeVersion,
                        forged: isUIC ? record.forged : nil,
                        allowedProductOwnerCodes: isUIC && !record.allowedProductOwners.isEmpty
                            ? record.allowedProductOwners : nil,
                        scope: isUIC ? publicKey.map { UICKeyScope.summary(for: record.trustedKey($0)) } : nil,
                        keyId: record.keyID.rawValue, algorithm: record.algorithm,
                        keyType: publicKey.map { "\($0.kind)" } ?? "unreadable",
                        notBefore: record.notBeforeDate, notAfter: record.notAfterDate, source: record.source,
                        revoked: revokedSet.contains("\(record.family)/\(record.issuer)/\(record.keyID)"),
                        purpose: record.purpose.rawValue
                    )
                }
            if json {
                printLine(jsonLine(rows))  // one array; [] for an empty store
                return
            }
            if rows.isEmpty {
                printLine(
                    "No keys in \(trustStore.path). Add one with `farecheck keys generate` or `farecheck keys import`.")
                return
            }
            for row in rows {
                var window = ""
                if row.notBefore != nil || row.notAfter != nil {
                    window = " valid \(row.notBefore?.iso8601 ?? "…") .. \(row.notAfter?.iso8601 ?? "…")"
                }
                let name = row.issuerName.map { " (\($0))" } ?? ""
                var version = row.versionType.map { " \($0.isEmpty ? "(no versionType)" : $0)" } ?? ""
                if let barcodeVersion = row.barcodeVersion {
                    version += barcodeVersion.isEmpty ? " (no barcode version)" : " v\(barcodeVersion)"
                }
                let forged = row.forged == true ? " FORGED" : ""
                let owners = row.allowedProductOwnerCodes.map { " owners \($0.joined(separator: ","))" } ?? ""
                printLine(
                    "\(row.format) \(row.issuer)\(name) \(row.keyId) \(row.algorithm ?? "?") \(row.keyType)\(version)\(window)\(owners)\(row.purpose == KeyPurpose.tickets.rawValue ? "" : " for:\(row.purpose)")\(row.revoked ? " REVOKED" : "")\(forged) [\(row.source)]"
                )
                if let scope = row.scope { printLine("    \(scope)") }
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "remove", abstract: "Stop trusting a key.")

        @Argument(help: "The key id (hex for FC1; as the ticket header writes it for UIC; the CHR for VDV).")
        var kid: String
        @Option(help: "Only the key of this issuer (a RICS code for UIC keys).") var issuer: String?
        @OptionGroup var store: StoreOptions

        func run() throws {
            let trustStore = try store.open()
            // A VDV certificate's CHR: 16 hex digits.
            if issuer == nil, kid.count == 16, [UInt8](hex: kid) != nil {
                let removed: Bool
                do {
                    removed = try trustStore.removeVDVAuthority(kid)
                } catch {
                    throw CommandFailure.exit(error.description)
                }
                if removed {
                    printLine("removed VDV certificate \(kid.lowercased())")
                    return
                }
            }
            let isUIC = issuer.map(UICKeyList.isRICSCode) ?? false
            let removed: Int
            do {
                removed = try trustStore.removeKeys(
                    withID: isUIC ? UICKeyList.normalizedCode(kid) : kid.lowercased(),
                    issuer: isUIC ? issuer.map(UICKeyList.normalizedCode) : issuer
                )
            } catch {
                throw CommandFailure.exit(error.description)
            }
            guard removed > 0 else { throw CommandFailure.exit("no key \(kid) in \(trustStore.path)") }
            printLine("removed \(removed) key\(removed == 1 ? "" : "s") with id \(kid)")
        }
    }
}

extension KeyPurpose: ExpressibleByArgument {
    /// What a key's line says about its purpose: nothing for a ticket key.
    var note: String {
        switch self {
        case .tickets: ""
        case .staffBadges: ", for staff badges"
        case .testTickets: ", a test key"
        }
    }
}

/// `--not-before` and `--not-after`: a key's validity, as `keys generate` and `keys import` take it.
struct KeyValidityOptions: ParsableArguments {
    @Option(
        name: .customLong("not-before"),
        help: ArgumentHelp("Start of the key's validity.", discussion: TimeInput.optionHelp, valueName: "time"),
        transform: parseTime)
    var notBefore: TimeInput?
    @Option(
        name: .customLong("not-after"),
        help: ArgumentHelp("End of the key's validity.", discussion: TimeInput.optionHelp, valueName: "time"),
        transform: parseTime)
    var notAfter: TimeInput?

    /// Says on standard error how a time given without an offset was read.
    func noteReadings() {
        noteReading(of: notBefore, option: "--not-before")
        noteReading(of: notAfter, option: "--not-after")
    }
}
