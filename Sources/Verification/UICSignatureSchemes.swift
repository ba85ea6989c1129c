import Signatures
import Synchronization
import TicketFormats

/// Which signature schemes a UIC 918.3 ticket may have been signed with, given its key.
///
/// The ticket header names no algorithm. The key list's algorithm text says which hash goes with the
/// key; where it names none (`DSA1024`) or the key came without a list entry, the hashes that fit the
/// key's size are tried, the usual one first.
enum UICSignatureSchemes {
    static func candidates(for key: TrustedKey, form: UICSignatureForm) -> [SignatureScheme] {
        let encoding: SignatureEncoding = form == .der ? .der : .raw
        let named = key.algorithm.map(namedDigests) ?? []
        switch key.publicKey.kind {
        case .dsa(_, let qBits):
            let fitting: [DigestAlgorithm] =
                switch qBits {
                case ...160: [.sha1]
                case 161...224: [.sha224, .sha256]
                default: [.sha256, .sha224]
                }
            return unique(named + fitting).map { .dsa($0, encoding) }
        case .ecP256:
            // Without a named hash (most keys): the one scheme, without the arrays that merge them.
            guard !named.isEmpty else { return [.ecdsa(.sha256, encoding)] }
            return unique(named + [.sha256]).map { .ecdsa($0, encoding) }
        default:
            return []
        }
    }

    /// The hashes an algorithm text names, read once per distinct text: reading it takes Foundation's
    /// case folding, a character-set filter and substring search, about a microsecond, for every ticket.
    /// A key list spells its algorithms a dozen ways, so the memo stays small; it stops growing at 256 texts.
    private static func namedDigests(_ text: String) -> [DigestAlgorithm] {
        if let known = algorithmMemo.withLock({ $0[text] }) { return known }
        let digests = UICSignatureAlgorithm(text: text).hashes.map(digest)
        algorithmMemo.withLock { memo in
            if memo.count < 256 { memo[text] = digests }
        }
        return digests
    }

    private static let algorithmMemo = Mutex<[String: [DigestAlgorithm]]>([:])

    private static func digest(_ hash: UICHash) -> DigestAlgorithm {
        switch hash {
        case .sha1: .sha1
        case .sha224: .sha224
        case .sha256: .sha256
        }
    }

    private static func unique(_ digests: [DigestAlgorithm]) -> [DigestAlgorithm] {
        var seen: [DigestAlgorithm] = []
        for digest in digests where !seen.contains(digest) { seen.append(digest) }
        return seen
    }
}
