import FareCore
import Foundation
import Signatures
import Synchronization
import TicketFormats

extension TicketVerifier {
    /// Verifies a UK RSP6 text (docs/uk-rsp6.md): every key of the issuer (family `rsp6`) is tried on the RSA
    /// block; one that recovers a well-formed PKCS#1 v1.5 block proves the ticket genuine, and the bit field
    /// inside is the ticket. Then the policies: key validity and purpose, validity window (UK time), revocation.
    ///
    /// No key of the issuer: `unknown-key`. Keys, none recovering a block: `invalid-signature`. A block whose
    /// ticket reference is not the clear text's: `invalid-signature` (the clear part was altered). A recovered
    /// block whose fields run past its end: `malformed`, signature valid. Only a type-1 block (`00 01 FF…FF 00`)
    /// proves the issuer: a type-2 block (random non-zero padding) is `unsupported`, its fields shown unproven.
    func verifyRSP6(_ barcode: RSP6Barcode, at now: Date) throws(VerifierError) -> Verdict {
        let format = TicketFormat.ukRSP6
        let issuer = barcode.issuerID
        let keys: [TrustedKey]
        do {
            keys = try self.keys.keys(family: .rsp6, issuer: IssuerID(issuer))
        } catch {
            throw VerifierError(message: "the key directory failed", underlying: error)
        }
        guard !keys.isEmpty else {
            return Verdict(
                kind: .unknownKey,
                reason: "No trusted key of RSP6 issuer \(issuer); import the issuer's published keys "
                    + "(farecheck keys import --rsp6 \(issuer).json).",
                signature: .unknownKey, format: format, issuer: IssuerID(issuer), inspectedAt: now)
        }
        // What came of each key (by its index in `keys`: no key is copied), put into sentences only when the
        // verdict is explained (`Verdict.keys`). Left empty (no array made) when the first key tried proves the
        // ticket, as it mostly does: `provenFirst` then says it all.
        var trials: [RSP6Attempt] = []
        var provenFirst = false
        var recovered: (index: Int, payload: ArraySlice<UInt8>, padding: RSP6Padding)?
        // Whether a type-1 block was recovered: it ends the search; after a type-2 one, another key may still make a
        // type-1 block.
        var proven = false
        // The key that recovered this issuer's last ticket first: tickets in circulation mostly carry the newest
        // key, so most verdicts then take one RSA operation, not one per older key. That key's index, and the
        // others in their order after it (no reordered copy of the array is made).
        let preferred = rsp6RawKeys.lastRecovering(issuer: IssuerID(issuer)).flatMap { id in
            keys.firstIndex { $0.keyID == id }
        }
        let first = preferred ?? 0
        for position in 0..<keys.count {
            let index = Self.rsp6KeyIndex(position: position, first: first)
            if proven {
                trials.append(RSP6Attempt(index: index, trial: .notTried))
                continue
            }
            guard let raw = rsp6RawKeys.key(for: keys[index].publicKey) else {
                trials.append(RSP6Attempt(index: index, trial: .notRSA))
                continue
            }
            // c is the barcode's block followed by zeros up to the modulus's length (`RSP6Barcode.rsaInput`).
            guard barcode.block.count <= raw.modulusByteCount else {
                trials.append(RSP6Attempt(index: index, trial: .longerThanModulus(bits: raw.bits)))
                continue
            }
            let block: [UInt8]
            do {
                block = try raw.publicOperation(zeroPaddedPrefix: barcode.block)
            } catch {
                trials.append(RSP6Attempt(index: index, trial: .refused(error.message)))
                continue
            }
            guard let (payload, padding) = RSP6Padding.unpad(block) else {
                trials.append(RSP6Attempt(index: index, trial: .noBlock))
                continue
            }
            if recovered == nil || padding == .type1 { recovered = (index, payload, padding) }
            if padding == .type1 {
                proven = true
                // Noted only when it changes: the lock is then not taken on every verdict.
                if position != 0 || preferred == nil {
                    rsp6RawKeys.recovered(issuer: IssuerID(issuer), keyID: keys[index].keyID)
                }
                if position == 0 {
                    // The others are not tried: nothing more to note.
                    provenFirst = true
                    break
                }
            }
            trials.append(RSP6Attempt(index: index, trial: .recovered(padding)))
        }
        let considerations: @Sendable () -> [KeyConsideration] = { [trials, keys, provenFirst, first] in
            guard provenFirst else { return trials.map { KeyConsideration(rsp6: keys[$0.index], $0.trial) } }
            return (0..<keys.count).map { position in
                KeyConsideration(
                    rsp6: keys[Self.rsp6KeyIndex(position: position, first: first)],
                    position == 0 ? .recovered(.type1) : .notTried)
            }
        }
        guard let (keyIndex, payload, padding) = recovered else {
            if let broken = Self.rsp6LengthRefusal(barcode, keys: keys, raw: rsp6RawKeys, at: now) { return broken }
            var verdict = Verdict(
                kind: .invalidSignature,
                reason: "None of the \(keys.count) keys of RSP6 issuer \(issuer) recovers a well-formed block from "
                    + "the barcode: the ticket was altered or forged.",
                signature: .invalid, format: format, issuer: IssuerID(issuer), inspectedAt: now)
            verdict.deferKeys(considerations)
            return verdict
        }
        let key = keys[keyIndex]
        if padding == .type2 {
            // Type 2 pads with any non-zero bytes: the public key turns a random number into such a block about once
            // in a hundred thousand tries, so a forger needs no private key, only a few seconds. Never valid, never
            // forged: the fields are shown, unproven, for the inspector to compare with the printed ticket.
            let shown = (try? RSP6Ticket(decoding: payload)).map { RSP6.ticket(from: $0, barcode: barcode) }
            var verdict = Verdict(
                kind: .unsupported,
                reason:
                    "Key \(key.keyID) of RSP6 issuer \(issuer) opens the barcode to a PKCS#1 block of type 2, which "
                    + "does not prove that the issuer made it (random letters give such a block about once in a "
                    + "hundred thousand tries): farecheck cannot judge this ticket; check the printed ticket.",
                signature: .unsupported, format: format, issuer: IssuerID(issuer), keyID: key.keyID,
                ticket: shown,
                inspectedAt: now)
            verdict.deferKeys(considerations)
            return verdict
        }
        let decoded: RSP6Ticket
        do {
            decoded = try RSP6Ticket(decoding: payload)
        } catch {
            return Verdict(
                kind: .malformed,
                reason: "The signature is valid but the fields make no ticket: \(sentence(error.message))",
                signature: .valid, format: format, issuer: IssuerID(issuer), keyID: key.keyID, inspectedAt: now,
                keys: considerations())
        }
        guard decoded.reference == barcode.reference else {
            return Verdict(
                kind: .invalidSignature,
                reason: "The signed ticket is \(issuer)\(decoded.reference), but the barcode's clear text says "
                    + "\(barcode.ticketReference): the clear part was altered.",
                signature: .invalid, format: format, issuer: IssuerID(issuer), keyID: key.keyID,
                inspectedAt: now,
                keys: considerations())
        }
        let ticket = RSP6.ticket(from: decoded, barcode: barcode)
        var verdict = try applyPolicies(
            rsp6Policies, PolicyContext(ticket: ticket, key: key, now: now), warnings: Self.warnings(decoded))
        verdict.deferKeys(considerations)
        return verdict
    }

    /// The verdict for a text whose body no key of the issuer can make (cut short or run on by a scanner, or copied
    /// wrong): a broken text, not a forgery. A block of a b-bit key takes at most `RSP6Barcode.letters(bits:)`
    /// letters, and a genuine one takes fewer only when its number happens to be small (more than five fewer: one
    /// ticket in 11.9 million). Asked only when no key recovered a block, so a genuine ticket pays nothing for it;
    /// nil when some key's size fits the body.
    static func rsp6LengthRefusal(
        _ barcode: RSP6Barcode, keys: [TrustedKey], raw: RSP6RawKeys, at now: Date
    ) -> Verdict? {
        let sizes = keys.compactMap { raw.key(for: $0.publicKey)?.bits }
        let most = sizes.map(RSP6Barcode.letters(bits:))
        guard let longest = most.max(), let shortest = most.min(),
            !most.contains(where: { (($0 - rsp6LetterSlack)...$0).contains(barcode.letterCount) })
        else { return nil }
        return Verdict(
            kind: .malformed,
            reason: "The RSP6 text has \(barcode.letterCount) letters after its header, but a block of RSP6 "
                + "issuer \(barcode.issuerID)'s keys takes \(shortest - rsp6LetterSlack) to \(longest) letters: the "
                + "text was cut short or runs on; scan it again.",
            signature: .notChecked, format: .ukRSP6, issuer: IssuerID(barcode.issuerID), inspectedAt: now)
    }

    /// How many letters fewer than the most a block of a key's size takes are still a plausible block: a genuine
    /// number below 26^(most − 5) comes once in 11.9 million tickets.
    static let rsp6LetterSlack = 5

    /// The index in the issuer's keys of the key tried at `position`: the one at `first` (the key that recovered
    /// the issuer's last ticket) first, then the others in their order.
    static func rsp6KeyIndex(position: Int, first: Int) -> Int {
        position == 0 ? first : (position <= first ? position - 1 : position)
    }

    /// What the fields do not let farecheck decide, said as warnings (docs/uk-rsp6.md).
    static func warnings(_ ticket: RSP6Ticket) -> [VerdictWarning] {
        var warnings: [VerdictWarning] = []
        if !ticket.statesDaysOfValidity {
            warnings.append(
                VerdictWarning(
                    code: "days-of-validity-not-stated",
                    message: "The ticket does not state its days of validity; it was judged on its travel day alone: "
                        + "check the printed validity (a return or a season may be valid longer)."))
        }
        if ticket.departureTimeIsSet {
            let fields = UKTime.localFields(of: ticket.departure)
            let time = "\(fields.hour.twoDigits):\(fields.minute.twoDigits)"
            warnings.append(
                VerdictWarning(
                    code: "booked-departure",
                    message:
                        "The ticket is for the departure booked at \(time) UK time on \(RSP6.dayText(fields.day)): check the "
                        + "train."))
        }
        if ticket.limitedDurationCode != 0 {
            warnings.append(
                VerdictWarning(
                    code: "limited-duration",
                    message: "The ticket carries limited-duration code \(ticket.limitedDurationCode), which farecheck "
                        + "does not interpret: its validity may end before the end of the day; check the printed "
                        + "validity."))
        }
        return warnings
    }
}

/// One RSP6 key tried on a barcode: its index among the issuer's keys, and what came of it.
struct RSP6Attempt: Sendable {
    let index: Int
    let trial: RSP6KeyTrial
}

/// What came of trying one RSP6 key on a barcode.
enum RSP6KeyTrial: Sendable {
    /// It recovers a well-formed block, with this padding.
    case recovered(RSP6Padding)
    /// Another key of the issuer recovered the block first.
    case notTried
    /// It is no RSA key of a size the raw operation takes.
    case notRSA
    /// The barcode's number has more bytes than the key's modulus.
    case longerThanModulus(bits: Int)
    /// The operation refused the number (not below the modulus).
    case refused(String)
    /// The result is no well-formed PKCS#1 v1.5 block.
    case noBlock
}

extension KeyConsideration {
    /// A consideration of an RSP6 key.
    init(rsp6 key: TrustedKey, _ trial: RSP6KeyTrial) {
        let (outcome, reason): (Outcome, String) =
            switch trial {
            case .recovered(let padding): (.verified, "recovers a PKCS#1 v1.5 block of \(padding)")
            case .notTried: (.notTried, "another key of the issuer recovered the block")
            case .notRSA: (.skipped, "not an RSA key of 512 to 8192 bits")
            case .longerThanModulus(let bits): (.failed, "the barcode's number is longer than its \(bits)-bit modulus")
            case .refused(let message): (.failed, message)
            case .noBlock: (.failed, "gives no well-formed PKCS#1 v1.5 block")
            }
        self.init(
            issuer: key.issuer, keyID: key.keyID, listing: "RSP6 key; \(key.publicKey.kind)", outcome: outcome,
            reason: reason)
    }
}

/// The raw RSA form of RSP6 keys, built once per key and shared by copies of the verifier: building one (its
/// Montgomery context) costs a good part of a 1024-bit public operation.
///
/// Each entry keeps the `PublicKey` it was made from, so an entry is found by that key object's identity and the
/// identity cannot be reused while the entry lives (the store and the snapshot hand out the same object for a key).
final class RSP6RawKeys: Sendable {
    private struct Entry {
        let source: PublicKey
        let raw: RSARawPublicKey?
    }

    private let entries = Mutex<[ObjectIdentifier: Entry]>([:])
    /// Per issuer, the id of the key that recovered its last ticket.
    private let lastKeys = Mutex<[IssuerID: KeyID]>([:])
    private let capacity: Int

    init(capacity: Int = 1_024) {
        self.capacity = capacity
    }

    /// The id of the key that recovered `issuer`'s last ticket, if any.
    func lastRecovering(issuer: IssuerID) -> KeyID? { lastKeys.withLock { $0[issuer] } }

    /// Notes that `keyID` recovered a ticket of `issuer`.
    func recovered(issuer: IssuerID, keyID: KeyID) {
        lastKeys.withLock { keys in
            if keys[issuer] != keyID {
                if keys.count >= capacity { keys.removeAll(keepingCapacity: true) }
                keys[issuer] = keyID
            }
        }
    }

    /// The raw form of `key`; `nil` when it is not an RSA key that `RSARawPublicKey` accepts.
    func key(for key: PublicKey) -> RSARawPublicKey? {
        let identity = ObjectIdentifier(key)
        if let entry = entries.withLock({ $0[identity] }), entry.source === key { return entry.raw }
        let raw = try? RSARawPublicKey(key)
        entries.withLock { entries in
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[identity] = Entry(source: key, raw: raw)
        }
        return raw
    }
}
