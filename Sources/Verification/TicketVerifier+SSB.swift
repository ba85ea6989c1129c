import FareCore
import Foundation
import Signatures
import TicketFormats

extension TicketVerifier {
    /// Verifies an ERA SSB frame: key by issuer RICS code and key id among the UIC key list's keys (family `uic`,
    /// where `farecheck keys import --issuer 1179 --kid 1` puts SŽ's key too), DSA over bytes 0–57 as received,
    /// then the fields, then the UIC policies (key validity, validity window, revocation).
    ///
    /// Version 1 frames are decoded by `SSBTicket` but not verified: no source says where their signature is.
    func verifySSB(_ frame: SSBFrame, at now: Date) throws(VerifierError) -> Verdict {
        let format = TicketFormat.eraSSB
        let issuer = String(frame.issuerCode)
        guard let keyNumber = frame.keyID, let signature = frame.signature, let form = frame.signatureForm else {
            return Verdict(
                kind: .unsupported,
                reason: "ERA SSB version \(frame.version) tickets carry no signature that farecheck can locate.",
                signature: .unsupported, format: format, issuer: IssuerID(issuer), inspectedAt: now)
        }
        let keyID = String(keyNumber)
        let label = "\(issuer)/\(keyID)"
        let ssbFrame = UICBarcodeFrame.ssb(version: frame.version)
        let shape = UICSignatureShape(
            kinds: .dsa, integerWidth: SignatureIntegerWidth.of(signature, encoding: form == .der ? .der : .raw))
        let candidates = try uicKeyCandidates(
            issuer: IssuerID(issuer), keyID: KeyID(keyID), frame: ssbFrame, shape: shape)
        guard !candidates.isEmpty else {
            return Verdict(
                kind: .unknownKey,
                reason: "No trusted key \(label) (issuer/key id); import the UIC key list or the issuer's key.",
                signature: .unknownKey, format: format, issuer: IssuerID(issuer), keyID: KeyID(keyID), inspectedAt: now)
        }
        let trial = UICKeyTrial(candidates, signature: signature, message: frame.signedData) {
            SSBSignatureSchemes.candidates(for: $0, form: form)
        }
        guard let key = trial.verified?.key else {
            // Unsigned fields, read only to tell which failed keys were trusted when the ticket says it was issued.
            let issuedAt = try? ERASSB.ticket(from: SSBTicket(frame: frame), signatureForm: form, inspectedAt: now)
                .issuedAt
            return unmatchedVerdict(
                trial, issuedAt: issuedAt, frame: ssbFrame, format: format, issuer: IssuerID(issuer),
                keyID: KeyID(keyID), label: label,
                at: now)
        }
        let ticket: Ticket
        let specimen: Bool
        do {
            let decoded = try SSBTicket(frame: frame)
            ticket = try ERASSB.ticket(from: decoded, signatureForm: form, inspectedAt: now)
            specimen = decoded.common?.specimen ?? false
        } catch {
            return Verdict(
                kind: error.code == .unsupported ? .unsupported : .malformed,
                reason: "The signature is valid but the fields make no ticket: \(sentence(error.message))",
                signature: .valid, format: format, issuer: IssuerID(issuer), keyID: KeyID(keyID), inspectedAt: now,
                keys: trial.considerations(issuedAt: nil).keys)
        }
        var verdict = try applyPolicies(uicPolicies, PolicyContext(ticket: ticket, key: key, now: now))
        let issuedAt = ticket.issuedAt
        verdict.deferKeys { trial.considerations(issuedAt: issuedAt).keys }
        if specimen {
            verdict.warnings.append(
                VerdictWarning(code: "specimen", message: "The ticket is marked as a specimen (a test ticket)."))
        }
        return verdict
    }
}

/// Which DSA schemes an SSB signature may have been made with, given its key and layout.
///
/// The frame names no hash. The key list's algorithm text goes first when it names one; then the hashes that
/// fit the key's subgroup size (q ≤ 160 bits: SHA-1; 224: SHA-224, then SHA-256; 256: SHA-256, then SHA-224),
/// as B.12 pairs DSA 1024/160 with SHA-1 and 2048/224 with SHA-224.
enum SSBSignatureSchemes {
    static func candidates(for key: TrustedKey, form: SSBSignatureForm) -> [SignatureScheme] {
        guard case .dsa(_, let qBits) = key.publicKey.kind else { return [] }
        let encoding: SignatureEncoding = form == .der ? .der : .raw
        let named: [DigestAlgorithm] = UICSignatureAlgorithm(text: key.algorithm ?? "").hashes.map {
            switch $0 {
            case .sha1: .sha1
            case .sha224: .sha224
            case .sha256: .sha256
            }
        }
        let fitting: [DigestAlgorithm] =
            switch qBits {
            case ...160: [.sha1]
            case 161...224: [.sha224, .sha256]
            default: [.sha256, .sha224]
            }
        var digests: [DigestAlgorithm] = []
        for digest in named + fitting where !digests.contains(digest) { digests.append(digest) }
        return digests.map { .dsa($0, encoding) }
    }
}
