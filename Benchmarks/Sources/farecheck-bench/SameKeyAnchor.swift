import COpenSSLSpeedLoop
import Foundation
import Signatures

/// `openssl speed`'s verify loop run on a format's own key (the C target `COpenSSLSpeedLoop`), for the keys
/// `openssl speed` has no figure for: UIC's and SŽ's DSA-2048 keys with a 224- or 256-bit q (speed's dsa2048 has a
/// 160-bit q, a third less work), VDV-KA's RSA keys with e = 0x40000081 (speed's have 65537, half the
/// multiplications), and RSASSA-PSS (speed checks PKCS#1 v1.5, without PSS's mask generation).
///
/// `calibrate()` runs the same loop on the key shapes `openssl speed` does have, beside it, so that the loop is
/// shown to time what `openssl speed` times.
struct SameKeyAnchor {
    /// How the line names it, e.g. `OpenSSL loop, DSA 2048/224`.
    let label: String
    let operation: COpenSSLSpeedLoopOperation
    let spki: [UInt8]
    /// The DER signature (verify), or the RSA input (public operation).
    let signature: [UInt8]
    let digest: [UInt8]

    /// Operations per CPU second over `seconds`, or nil when the key or the operation fails.
    func rate(seconds: Double) -> Double? {
        let rate = spki.withUnsafeBufferPointer { spki in
            signature.withUnsafeBufferPointer { signature in
                digest.withUnsafeBufferPointer { digest in
                    copenssl_speed_loop_rate(
                        operation, spki.baseAddress, spki.count, signature.baseAddress, signature.count,
                        digest.baseAddress, digest.count, seconds)
                }
            }
        }
        return rate > 0 ? rate : nil
    }

    /// A DSA or ECDSA verify of `signature` (DER) over `message`'s digest with `algorithm`.
    static func verify(
        _ label: String, key: PublicKey, signature: [UInt8], message: [UInt8], algorithm: DigestAlgorithm
    ) -> SameKeyAnchor {
        SameKeyAnchor(
            label: label, operation: COpenSSLSpeedLoopVerify, spki: key.spkiDER, signature: signature,
            digest: Signatures.digest(algorithm, message))
    }

    /// An RSASSA-PSS (SHA-256, MGF1 SHA-256, salt as long as the digest) verify of `signature` over `message`.
    static func pss(_ label: String, key: PublicKey, signature: [UInt8], message: [UInt8]) -> SameKeyAnchor {
        SameKeyAnchor(
            label: label, operation: COpenSSLSpeedLoopVerifyPSS, spki: key.spkiDER, signature: signature,
            digest: Signatures.digest(.sha256, message))
    }

    /// An ECDSA P-256 verify under a key made anew for every check from `key`'s compressed point, as a barcode that
    /// carries its own key needs (DOSIPAS's level 2); `signature` is DER.
    static func newPoint(_ label: String, key: PublicKey, signature: [UInt8], message: [UInt8]) -> SameKeyAnchor {
        // A P-256 SubjectPublicKeyInfo ends with the uncompressed point, 0x04 ‖ x ‖ y.
        let uncompressed = Array(key.spkiDER.suffix(65))
        let compressed = [0x02 | (uncompressed[64] & 1)] + uncompressed[1...32]
        return SameKeyAnchor(
            label: label, operation: COpenSSLSpeedLoopVerifyNewPoint, spki: compressed, signature: signature,
            digest: Signatures.digest(.sha256, message))
    }

    /// The RSA public operation alone with `key` on an input below its modulus.
    static func rsaPublic(_ label: String, key: PublicKey) -> SameKeyAnchor? {
        guard let (modulus, _) = key.rsaComponents else { return nil }
        // The modulus with its top byte lowered: below it, and as long.
        var input = modulus
        input[0] -= 1
        return SameKeyAnchor(
            label: label, operation: COpenSSLSpeedLoopRSAPublic, spki: key.spkiDER, signature: input, digest: [])
    }

    /// The DER form (SEQUENCE of two INTEGERs) of a raw `r ‖ s` signature split in half.
    static func der(raw: [UInt8]) -> [UInt8] {
        func integer(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
            var value = Array(bytes.drop(while: { $0 == 0 }))
            if value.isEmpty || value[0] & 0x80 != 0 { value.insert(0, at: 0) }
            return [0x02] + length(value.count) + value
        }
        func length(_ count: Int) -> [UInt8] {
            count < 0x80
                ? [UInt8(count)]
                : count < 0x100 ? [0x81, UInt8(count)] : [0x82, UInt8(count >> 8), UInt8(count & 0xFF)]
        }
        let half = raw.count / 2
        let body = integer(raw[..<half]) + integer(raw[half...])
        return [0x30] + length(body.count) + body
    }

    /// An RSA key of `bits` with public exponent `exponent`, made by the openssl program (nil without it).
    static func rsaKey(bits: Int, exponent: UInt64) -> PublicKey? {
        guard let openssl = findTool("openssl"),
            let pem = runTool(
                openssl,
                [
                    "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:\(bits)", "-pkeyopt",
                    "rsa_keygen_pubexp:\(exponent)",
                ]),
            let key = try? PrivateKey(pem: pem)
        else { return nil }
        return key.publicKey
    }

    /// The loop on the key shapes `openssl speed` has a figure for, beside `openssl speed`: the ratio shows whether
    /// the loop times what `openssl speed` times (it should be near 100 %).
    static func calibrate(seconds: Double) throws {
        let message = [UInt8](repeating: 0x5A, count: 150)
        var cases: [(String, SameKeyAnchor)] = []
        let p256 = try PrivateKey.generate(.ecP256)
        cases.append(
            (
                "ecdsap256",
                verify(
                    "OpenSSL loop, P-256", key: p256.publicKey,
                    signature: try p256.signature(for: message, scheme: .ecdsa(.sha256, .der)), message: message,
                    algorithm: .sha256)
            ))
        for bits in [1024, 2048] {
            if let key = rsaKey(bits: bits, exponent: 65537),
                let anchor = rsaPublic("OpenSSL loop, RSA-\(bits) public operation", key: key)
            {
                cases.append(("rsa\(bits)", anchor))
            }
        }
        for (reference, anchor) in cases {
            var loop: [Double] = []
            var speed: [Double] = []
            for _ in 0..<BenchCommand.rounds {
                let round = seconds / Double(BenchCommand.rounds)
                if let rate = OpenSSLSpeed.anchor(reference)(round) {
                    speed.append(rate)
                }
                if let rate = anchor.rate(seconds: round) { loop.append(rate) }
            }
            guard !loop.isEmpty, !speed.isEmpty else { continue }
            let (own, theirs) = (BenchCommand.median(loop), BenchCommand.median(speed))
            printLine(
                "  calibration: \(anchor.label.padding(toLength: 40, withPad: " ", startingAt: 0)) "
                    + "\(BenchCommand.format(own))/s   openssl speed \(reference) \(BenchCommand.format(theirs))/s   "
                    + "\(String(format: "%.0f", own / theirs * 100)) %")
        }
    }
}
