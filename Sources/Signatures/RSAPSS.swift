import COpenSSL

/// RSASSA-PSS verification with SHA-256 (RFC 8017 §8.1.2 and EMSA-PSS-VERIFY, §9.1.2) on `RSARawPublicKey`'s
/// public operation: MGF1 with SHA-256 and a salt as long as the digest, which is exactly what OpenSSL's check
/// with `RSA_PSS_SALTLEN_DIGEST` accepts (`PublicKey` configures it so for every PSS key) and nothing else.
///
/// Why not OpenSSL's own: the raw operation applies a small public exponent with Montgomery multiplications in
/// place, 17 % under OpenSSL's general exponentiation for RSA-2048, and an FC1 PS256 verdict is four fifths RSA.
/// The tests hold this check to OpenSSL's on genuine, altered and crafted signatures (another salt length, a bad
/// trailer, the top bit set, a wrong padding byte, an odd modulus length).
enum RSAPSS {
    static let hashLength = 32

    /// Whether `signature` is a PSS signature by `key` of the message whose SHA-256 is `messageDigest`.
    static func isValid(
        _ signature: [UInt8], messageDigest: UnsafeBufferPointer<UInt8>, key: RSARawPublicKey
    ) -> Bool {
        let k = key.modulusByteCount
        // Exactly k bytes (RFC 8017 §8.1.2 step 1), as `PublicKey` also demands before OpenSSL's check.
        guard signature.count == k, messageDigest.count == hashLength,
            let block = try? key.publicOperation(signature)  // refuses s ≥ n
        else { return false }
        let emBits = key.bits - 1
        let emLength = (emBits + 7) / 8
        // EM = I2OSP(m, emLen): with emLen = k - 1 (a modulus of 8n + 1 bits) the block's first byte must be zero.
        let start = k - emLength
        guard start == 0 || block[0] == 0 else { return false }
        let h = hashLength
        let saltLength = hashLength
        guard emLength >= h + saltLength + 2, block[k - 1] == 0xBC else { return false }
        let dbLength = emLength - h - 1
        let hStart = start + dbLength
        // The bits of EM's first byte above emBits must be zero.
        let topMask = UInt8(truncatingIfNeeded: 0xFF >> (8 * emLength - emBits))
        guard block[start] & ~topMask == 0 else { return false }
        return block.withUnsafeBufferPointer { em -> Bool in
            let hashed = UnsafeBufferPointer(rebasing: em[hStart..<hStart + h])
            // DB = maskedDB ⊕ MGF1(H, dbLen), one SHA-256 block of mask at a time.
            var db = [UInt8](unsafeUninitializedCapacity: dbLength) { buffer, initialized in
                withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 32) { mask in
                    var counter: UInt32 = 0
                    var offset = 0
                    while offset < dbLength {
                        var bigEndian = counter.bigEndian
                        withUnsafeBytes(of: &bigEndian) { counterBytes in
                            COpenSSL_SHA256_parts(
                                hashed.baseAddress, h, counterBytes.baseAddress?.assumingMemoryBound(to: UInt8.self),
                                4, nil, 0, mask.baseAddress)
                        }
                        let count = min(32, dbLength - offset)
                        for index in 0..<count {
                            buffer[offset + index] = em[start + offset + index] ^ mask[index]
                        }
                        offset += count
                        counter += 1
                    }
                }
                initialized = dbLength
            }
            db[0] &= topMask
            // DB = PS (zeros) ‖ 0x01 ‖ salt, the salt exactly hLen bytes.
            let separator = dbLength - saltLength - 1
            for index in 0..<separator where db[index] != 0 { return false }
            guard db[separator] == 0x01 else { return false }
            // H' = SHA-256(0x00 × 8 ‖ mHash ‖ salt) must equal H.
            let zeros = [UInt8](repeating: 0, count: 8)
            var expected = [UInt8](repeating: 0, count: h)
            db.withUnsafeBufferPointer { db in
                COpenSSL_SHA256_parts(
                    zeros, 8, messageDigest.baseAddress, h, db.baseAddress! + separator + 1, saltLength, &expected)
            }
            return expected.elementsEqual(hashed)
        }
    }
}
