import COpenSSL
import Foundation
import SeededRandom
import Testing

@testable import Signatures

@Suite("ECDSA P-256 with tables of the key's multiples")
struct P256FixedBaseTests {
    /// Three keys, and the digests checked with them.
    static let keys = [TestKeys.ecP256, TestKeys.otherECP256, try! PrivateKey.generate(.ecP256)]
    static let algorithms: [DigestAlgorithm] = [.sha256, .sha384, .sha512, .sha1]

    @Test("the field and scalar arithmetic agrees with OpenSSL's BN_mod_mul, BN_mod_sqr and BN_mod_inverse")
    func arithmetic() throws {
        let openSSL = try OpenSSLCurve()
        defer { withExtendedLifetime(openSSL) {} }
        var random = SeededRandomNumberGenerator(seed: 0x9256)
        for modulus in [P256.p, P256.n] {
            let m = openSSL.number(modulus)
            let (aNumber, bNumber, expected) = (openSSL.number(), openSSL.number(), openSSL.number())
            var failures = 0
            for round in 0..<3_000 {
                let a = P256.Limbs.random(below: modulus, using: &random)
                let b = P256.Limbs.random(below: modulus, using: &random)
                openSSL.set(aNumber, a)
                openSSL.set(bNumber, b)
                let product: P256.Limbs
                let square: P256.Limbs
                let inverse: () -> P256.Limbs
                if modulus == P256.p {
                    let (x, y) = (try #require(P256.FieldElement(a)), try #require(P256.FieldElement(b)))
                    (product, square, inverse) = ((x * y).value, x.squared.value, { x.inverse.value })
                    BN_mod_add(expected, aNumber, bNumber, m, openSSL.context)
                    if (x + y).value != openSSL.limbs(expected) { failures += 1 }
                    BN_mod_sub(expected, aNumber, bNumber, m, openSSL.context)
                    if (x - y).value != openSSL.limbs(expected) { failures += 1 }
                } else {
                    let (x, y) = (P256.Scalar(a), P256.Scalar(b))
                    (product, square, inverse) = ((x * y).value, x.squared.value, { x.inverse.value })
                }
                BN_mod_mul(expected, aNumber, bNumber, m, openSSL.context)
                if product != openSSL.limbs(expected) { failures += 1 }
                BN_mod_sqr(expected, aNumber, m, openSSL.context)
                if square != openSSL.limbs(expected) { failures += 1 }
                // A tenth of the numbers are inverted as well (an inversion is 300 multiplications).
                guard round % 10 == 0, !a.isZero else { continue }
                BN_mod_inverse(expected, aNumber, m, openSSL.context)
                if inverse() != openSSL.limbs(expected) { failures += 1 }
            }
            #expect(failures == 0, "modulo \(modulus.hex)")
        }
        // The constants the reductions rely on.
        #expect(P256.n.l0 &* P256.Scalar.nPrime == UInt64.max)
        #expect(P256.FieldElement(P256.Limbs(1, 0, 0, 0)) == P256.FieldElement.one)
        #expect(P256.Scalar(P256.Limbs(1, 0, 0, 0)) == P256.Scalar.one)
    }

    @Test("p, n, b and G are OpenSSL's prime256v1, G is on the curve and its table gives OpenSSL's k · G")
    func curve() throws {
        let openSSL = try OpenSSLCurve()
        defer { withExtendedLifetime(openSSL) {} }
        let (p, a, b, x, y) = (openSSL.number(), openSSL.number(), openSSL.number(), openSSL.number(), openSSL.number())
        EC_GROUP_get_curve(openSSL.group, p, a, b, openSSL.context)
        EC_POINT_get_affine_coordinates(openSSL.group, EC_GROUP_get0_generator(openSSL.group), x, y, openSSL.context)
        #expect(openSSL.limbs(p) == P256.p)
        #expect(openSSL.limbs(EC_GROUP_get0_order(openSSL.group)) == P256.n)
        #expect(openSSL.limbs(b) == P256.FieldElement.b.value)
        #expect(openSSL.limbs(x) == P256.AffinePoint.generator.x.value)
        #expect(openSSL.limbs(y) == P256.AffinePoint.generator.y.value)
        #expect(P256.AffinePoint.generator.isOnCurve)
        var moved = P256.AffinePoint.generator
        moved.y = moved.y + .one
        #expect(!moved.isOnCurve)

        let table = try #require(P256FixedBase.generatorTable)
        var random = SeededRandomNumberGenerator(seed: 0x6256)
        let edges: [P256.Limbs] = [
            .init(1, 0, 0, 0), .init(2, 0, 0, 0), .init(255, 0, 0, 0), .init(256, 0, 0, 0), .init(0, 0, 0, 1 << 63),
            P256.n.subtracting(.init(1, 0, 0, 0)).difference, .init(0, 0, 0, 0),
            .init(UInt64.max, UInt64.max, UInt64.max, 0xFFFF_FFFE_FFFF_FFFF),
        ]
        let scalars = edges + (0..<100).map { _ in P256.Limbs.random(below: P256.n, using: &random) }
        let point = openSSL.point()
        let k = openSSL.number()
        for scalar in scalars {
            var sum = P256.JacobianPoint.infinity
            table.multiply(scalar, into: &sum)
            openSSL.set(k, scalar)
            EC_POINT_mul(openSSL.group, point, k, nil, nil, openSSL.context)
            if EC_POINT_is_at_infinity(openSSL.group, point) == 1 {
                #expect(sum.isInfinity, "k = \(scalar.hex)")
                continue
            }
            EC_POINT_get_affine_coordinates(openSSL.group, point, x, y, openSSL.context)
            let affine = try #require(sum.affine, "k = \(scalar.hex)")
            #expect(affine.x.value == openSSL.limbs(x) && affine.y.value == openSSL.limbs(y), "k = \(scalar.hex)")
        }
    }

    @Test("a mixed addition doubles the same point, gives infinity for its negative, and copies onto infinity")
    func exceptionalAdditions() throws {
        let g = P256.AffinePoint.generator
        var doubled = P256.JacobianPoint(g)
        doubled.double()
        var twice = P256.JacobianPoint(g)
        twice.add(g)
        #expect(twice.affine == doubled.affine)
        var negated = g
        negated.y = P256.FieldElement(montgomery: .zero) - g.y
        var cancelled = P256.JacobianPoint(g)
        cancelled.add(negated)
        #expect(cancelled.isInfinity)
        cancelled.add(g)
        #expect(cancelled.affine == g)
        // The same with an accumulator whose Z is not 1: 2G + 2G, and 2G + (−2G).
        let twoG = try #require(doubled.affine)
        var fourG = doubled
        fourG.add(twoG)
        var doubledAgain = doubled
        doubledAgain.double()
        #expect(fourG.affine == doubledAgain.affine)
        var zero = doubled
        zero.add(P256.AffinePoint(x: twoG.x, y: P256.FieldElement(montgomery: .zero) - twoG.y))
        #expect(zero.isInfinity)
    }

    @Test(
        "the table gives OpenSSL's answer on genuine signatures and on signatures altered in r, s or the digest",
        arguments: 0..<3, 0..<4)
    func sameAnswersAsOpenSSL(keyIndex: Int, algorithmIndex: Int) throws {
        let key = Self.keys[keyIndex]
        let algorithm = Self.algorithms[algorithmIndex]
        let tables = try #require(P256FixedBase(pkey: key.publicKey.pkey))
        var random = SeededRandomNumberGenerator(seed: 0xEC00 + UInt64(keyIndex * 8 + algorithmIndex))
        var valid = 0
        for round in 0..<40 {
            let message = (0..<(10 + round)).map { _ in UInt8.random(in: 0...255, using: &random) }
            let encoding: SignatureEncoding = round % 8 < 4 ? .raw : .der
            let scheme = SignatureScheme.ecdsa(algorithm, encoding)
            var signature = try key.signature(for: message, scheme: scheme)
            var digest = Signatures.digest(algorithm, message)
            switch round % 4 {
            case 1:
                // One bit of r or s (or, in DER, of the encoding around them).
                let index = Int.random(in: 0..<signature.count, using: &random)
                signature[index] ^= UInt8(1) << UInt8.random(in: 0...7, using: &random)
            case 2:
                // One bit of the digest: past its first 32 bytes it is cut off, and the signature stays valid.
                let index = Int.random(in: 0..<digest.count, using: &random)
                digest[index] ^= UInt8(1) << UInt8.random(in: 0...7, using: &random)
            default:
                break
            }
            let expected = key.publicKey.isValidSignatureThroughOpenSSL(signature, forDigest: digest, scheme: scheme)
            if expected { valid += 1 }
            let integers =
                encoding == .raw ? SignatureIntegers.splitRaw(signature) : SignatureIntegers.parseDER(signature)
            guard let (r, s) = integers else {
                #expect(!expected, "round \(round): OpenSSL took a signature that does not parse")
                continue
            }
            let answer = digest.withUnsafeBufferPointer { tables.isValid(r: r, s: s, digest: $0) }
            #expect(answer == expected, "round \(round)")
        }
        #expect(valid >= 20)
    }

    @Test("r or s of zero, n − 1, n or above, with n added, or padded with zeros: OpenSSL's answer")
    func outOfRange() throws {
        let key = TestKeys.ecP256
        let tables = try #require(P256FixedBase(pkey: key.publicKey.pkey))
        let message = Array("a COSE Sig_structure".utf8)
        let signature = try key.signature(for: message, scheme: .es256)
        let (r, s) = (Array(signature[..<32]), Array(signature[32...]))
        let digest = Signatures.digest(.sha256, message)
        let n = P256.n.bigEndianBytes
        let nMinus1 = P256.n.subtracting(.init(1, 0, 0, 0)).difference.bigEndianBytes
        let nPlus1 = P256.n.adding(.init(1, 0, 0, 0)).sum.bigEndianBytes
        let cases: [(r: [UInt8], s: [UInt8], valid: Bool)] = [
            (r, s, true),
            ([0] + r, s, true), (r, [0] + s, true),
            ([UInt8](repeating: 0, count: 32) + r, [UInt8](repeating: 0, count: 32) + s, true),
            ([0], s, false), (r, [0], false), ([UInt8](repeating: 0, count: 32), s, false),
            (n, s, false), (r, n, false), (nMinus1, s, false), (r, nMinus1, false),
            (nPlus1, s, false), (r, nPlus1, false),
            (DSAFixedBaseTests.add(r, n), s, false), (r, DSAFixedBaseTests.add(s, n), false),
            ([UInt8](repeating: 0xFF, count: 32), s, false), (r, [UInt8](repeating: 0xFF, count: 32), false),
            ([UInt8](repeating: 0xFF, count: 64), s, false), (r, [UInt8](repeating: 0xFF, count: 300), false),
            ([1] + r, s, false), (r, [1] + s, false),
        ]
        for (index, (r, s, valid)) in cases.enumerated() {
            let der = SignatureIntegers.der(r: r[...], s: s[...])
            let expected = key.publicKey.isValidSignatureThroughOpenSSL(
                der, forDigest: digest, scheme: .ecdsa(.sha256, .der))
            let answer = digest.withUnsafeBufferPointer { tables.isValid(r: r[...], s: s[...], digest: $0) }
            #expect(expected == valid, "case \(index)")
            #expect(answer == expected, "case \(index)")
        }
    }

    @Test("a signature whose point R has an x of n or more: valid with r = x − n (the r + n < p branch), not with x")
    func xAtOrAboveN() throws {
        let openSSL = try OpenSSLCurve()
        defer { withExtendedLifetime(openSSL) {} }
        // The first x above n that is on the curve; x − n is small, so (x − n) + n < p.
        let x = openSSL.number()
        let rPoint = openSSL.point()
        var offset: UInt64 = 0
        repeat {
            offset += 1
            openSSL.set(x, P256.n.adding(.init(offset, 0, 0, 0)).sum)
        } while EC_POINT_set_compressed_coordinates(openSSL.group, rPoint, x, 0, openSSL.context) != 1
        OpenSSLError.discardQueue()
        let r = P256.Limbs(offset, 0, 0, 0)
        // Any s and digest; the key is then the one for which this R is u1 · G + u2 · Q: Q = (s / r) · R − (e / r) · G.
        let message = Array("R beyond n".utf8)
        let digest = Signatures.digest(.sha256, message)
        let e = openSSL.number(try #require(P256.Limbs(bigEndian: digest)))
        let s = P256.Limbs(0x1234_5678, 0x9ABC_DEF0, 0x0F1E_2D3C, 0x4B5A_6978)
        let (rInverse, pointFactor, generatorFactor) = (openSSL.number(), openSSL.number(), openSSL.number())
        BN_mod_inverse(rInverse, openSSL.number(r), openSSL.n, openSSL.context)
        BN_mod_mul(pointFactor, openSSL.number(s), rInverse, openSSL.n, openSSL.context)
        BN_mod_mul(generatorFactor, e, rInverse, openSSL.n, openSSL.context)
        BN_sub(generatorFactor, openSSL.n, generatorFactor)
        let q = openSSL.point()
        EC_POINT_mul(openSSL.group, q, generatorFactor, rPoint, pointFactor, openSSL.context)
        let publicKey = try openSSL.publicKey(q)
        let tables = try #require(P256FixedBase(pkey: publicKey.pkey))
        for (rBytes, valid) in [(r.bigEndianBytes, true), (openSSL.limbs(x).bigEndianBytes, false)] {
            let signature = rBytes + s.bigEndianBytes
            let expected = publicKey.isValidSignatureThroughOpenSSL(signature, forDigest: digest, scheme: .es256)
            #expect(expected == valid)
            let answer = digest.withUnsafeBufferPointer {
                tables.isValid(r: signature[..<32], s: signature[32...], digest: $0)
            }
            #expect(answer == valid)
        }
    }

    @Test(
        "with Q = G, sums that meet the same point, its negative or infinity during the check: OpenSSL's answer",
        arguments: [
            // u1, u2 (negative: n minus that), and whether u1 · G + u2 · Q is a point (not infinity).
            (1, 1, true),  // the first addition from Q's table doubles G
            (5, 5 + 256 * 7, true),  // 5G + 5G, a doubling with Z ≠ 1, then 1792G
            (-5, 5 + 256 * 7, true),  // −5G + 5G: infinity half-way, then 1792G
            (1, -1, false),  // G + (n − 1)G: infinity at the last addition
            (2, -1, true),
        ])
    func exceptionalSums(u1: Int, u2: Int, isPoint: Bool) throws {
        let openSSL = try OpenSSLCurve()
        defer { withExtendedLifetime(openSSL) {} }
        let publicKey = try openSSL.publicKey(EC_GROUP_get0_generator(openSSL.group))
        let tables = try #require(P256FixedBase(pkey: publicKey.pkey))
        func scalar(_ value: Int) -> OpaquePointer {
            let number = openSSL.number(P256.Limbs(UInt64(abs(value)), 0, 0, 0))
            if value < 0 { BN_sub(number, openSSL.n, number) }
            return number
        }
        let (u1Number, u2Number) = (scalar(u1), scalar(u2))
        // R = (u1 + u2) · G; r = x(R) mod n (1 at infinity), s = r / u2, e = u1 · s: the check's u1 and u2 are these.
        let sum = openSSL.number()
        BN_mod_add(sum, u1Number, u2Number, openSSL.n, openSSL.context)
        let point = openSSL.point()
        EC_POINT_mul(openSSL.group, point, sum, nil, nil, openSSL.context)
        #expect((EC_POINT_is_at_infinity(openSSL.group, point) == 0) == isPoint)
        let r = openSSL.number(P256.Limbs(1, 0, 0, 0))
        if isPoint {
            EC_POINT_get_affine_coordinates(openSSL.group, point, r, nil, openSSL.context)
            BN_nnmod(r, r, openSSL.n, openSSL.context)
        }
        let (s, e) = (openSSL.number(), openSSL.number())
        BN_mod_inverse(s, u2Number, openSSL.n, openSSL.context)
        BN_mod_mul(s, s, r, openSSL.n, openSSL.context)
        BN_mod_mul(e, u1Number, s, openSSL.n, openSSL.context)
        let signature = openSSL.limbs(r).bigEndianBytes + openSSL.limbs(s).bigEndianBytes
        let digest = openSSL.limbs(e).bigEndianBytes
        let expected = publicKey.isValidSignatureThroughOpenSSL(signature, forDigest: digest, scheme: .es256)
        #expect(expected == isPoint)
        let answer = digest.withUnsafeBufferPointer {
            tables.isValid(r: signature[..<32], s: signature[32...], digest: $0)
        }
        #expect(answer == expected)
    }

    @Test("a key from an SPKI checks with its table from its tableUse-th check on, with OpenSSL's answers")
    func throughPublicKey() throws {
        let key = TestKeys.otherECP256
        let publicKey = try PublicKey(spkiDER: key.publicKey.spkiDER)
        let message = Array("FC1 Sig_structure".utf8)
        let signatures = try [SignatureScheme.es256, .ecdsa(.sha384, .der)].map {
            ($0, try key.signature(for: message, scheme: $0))
        }
        for round in 0..<(2 * P256FixedBase.tableUse) {
            #expect(publicKey.ecTablesMade == (round >= P256FixedBase.tableUse), "round \(round)")
            let (scheme, signature) = signatures[round % 2]
            let checked = round % 3 == 0 ? message + [UInt8(round)] : message
            let answer = publicKey.isValidSignature(signature, for: checked, scheme: scheme)
            #expect(answer == publicKey.isValidSignatureThroughOpenSSL(signature, for: checked, scheme: scheme))
            #expect(answer == (round % 3 != 0), "round \(round)")
        }
        #expect(publicKey.ecTablesMade)
    }

    @Test("a key from a bare point (a barcode's) and a P-384 key never make tables")
    func keysWithoutTables() throws {
        let key = TestKeys.ecP256
        let message = Array("level 2 signed data".utf8)
        let signature = try key.signature(for: message, scheme: .ecdsa(.sha256, .der))
        let fromPoint = try PublicKey(ecPoint: Array(key.publicKey.spkiDER.suffix(65)), curve: .p256)
        for _ in 0..<(P256FixedBase.tableUse + 2) {
            #expect(fromPoint.isValidSignature(signature, for: message, scheme: .ecdsa(.sha256, .der)))
        }
        #expect(!fromPoint.ecTablesMade)

        let p384 = try Self.p384Key()
        #expect(P256FixedBase(pkey: p384.publicKey.pkey) == nil)
        let p384Signature = try p384.signature(for: message, scheme: .ecdsa(.sha384, .raw))
        for round in 0..<(P256FixedBase.tableUse + 2) {
            let checked = round % 2 == 0 ? message : message + [1]
            #expect(
                p384.publicKey.isValidSignature(p384Signature, for: checked, scheme: .ecdsa(.sha384, .raw))
                    == (round % 2 == 0))
        }
        #expect(!p384.publicKey.ecTablesMade)
    }

    @Test("checks on one key from four tasks at once, while its table is made and after, are all right")
    func concurrentChecks() async throws {
        let key = Self.keys[2]
        let publicKey = try PublicKey(spkiDER: key.publicKey.spkiDER)
        let message = Array("concurrent inspections".utf8)
        let signature = try key.signature(for: message, scheme: .es256)
        let wrong = try key.signature(for: message + [0], scheme: .es256)
        let failures = await withTaskGroup(of: Int.self) { group in
            for task in 0..<4 {
                group.addTask {
                    var failures = 0
                    for round in 0..<200 {
                        let genuine = (round + task) % 2 == 0
                        let answer = publicKey.isValidSignature(
                            genuine ? signature : wrong, for: message, scheme: .es256)
                        if answer != genuine { failures += 1 }
                    }
                    return failures
                }
            }
            return await group.reduce(0, +)
        }
        #expect(failures == 0)
        #expect(publicKey.ecTablesMade)
    }

    /// A P-384 key (`PrivateKey.generate` makes P-256 ones only).
    static func p384Key() throws -> PrivateKey {
        let context = try #require(EVP_PKEY_CTX_new_from_name(nil, "EC", nil))
        defer { EVP_PKEY_CTX_free(context) }
        var pkey: OpaquePointer?
        guard EVP_PKEY_keygen_init(context) == 1, EVP_PKEY_CTX_set_group_name(context, "secp384r1") == 1,
            EVP_PKEY_generate(context, &pkey) == 1
        else { throw SignatureError(code: .keyGenerationFailed, message: "no P-384 key") }
        return try PrivateKey(adopting: try #require(pkey))
    }
}

/// prime256v1 through OpenSSL's EC_GROUP and BIGNUM functions, to make the numbers, points and keys the tests need.
/// Every number and point it makes lives as long as it does: a test keeps it to its end (`withExtendedLifetime`).
private final class OpenSSLCurve {
    let group: OpaquePointer
    let context: OpaquePointer
    private var numbers: [OpaquePointer] = []
    private var points: [OpaquePointer] = []
    /// The group order.
    private(set) var n: OpaquePointer! = nil

    init() throws {
        group = try #require(EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1))
        context = try #require(BN_CTX_new())
        n = number(P256.n)
    }

    deinit {
        for number in numbers { BN_free(number) }
        for point in points { EC_POINT_free(point) }
        EC_GROUP_free(group)
        BN_CTX_free(context)
    }

    /// A new number, 0 or `limbs`.
    func number(_ limbs: P256.Limbs = .zero) -> OpaquePointer {
        let number = BN_new()!
        numbers.append(number)
        set(number, limbs)
        return number
    }

    func set(_ number: OpaquePointer, _ limbs: P256.Limbs) {
        BN_bin2bn(limbs.bigEndianBytes, 32, number)
    }

    /// `number`, below 2^256.
    func limbs(_ number: OpaquePointer?) -> P256.Limbs {
        var bytes = [UInt8](repeating: 0, count: 32)
        precondition(BN_bn2binpad(number, &bytes, 32) == 32)
        return P256.Limbs(bigEndian: bytes)!
    }

    /// A new point, at infinity.
    func point() -> OpaquePointer {
        let point = EC_POINT_new(group)!
        points.append(point)
        return point
    }

    /// A public key read from the SubjectPublicKeyInfo of `point`, as trust data holds it.
    func publicKey(_ point: OpaquePointer?) throws -> PublicKey {
        var bytes = [UInt8](repeating: 0, count: 65)
        #expect(EC_POINT_point2oct(group, point, POINT_CONVERSION_UNCOMPRESSED, &bytes, 65, context) == 65)
        // A P-256 SubjectPublicKeyInfo is this header and the uncompressed point.
        let header = Array(TestKeys.ecP256.publicKey.spkiDER.prefix(26))
        return try PublicKey(spkiDER: header + bytes)
    }
}

extension P256.Limbs {
    /// The number in hexadecimal, for failure messages.
    var hex: String { bigEndianBytes.map { String(format: "%02x", $0) }.joined() }

    /// The number as 32 big-endian bytes.
    var bigEndianBytes: [UInt8] {
        [l3, l2, l1, l0].flatMap { limb in (0..<8).map { UInt8(truncatingIfNeeded: limb >> (56 - 8 * $0)) } }
    }

    /// A number below `modulus`: uniform most of the time, otherwise one near an edge (0, 1, modulus − 1, limbs of all
    /// ones or zeros), where carries and reductions go wrong first.
    static func random(below modulus: Self, using random: inout SeededRandomNumberGenerator) -> Self {
        while true {
            let limb = { (random: inout SeededRandomNumberGenerator) -> UInt64 in
                switch random.next() % 4 {
                case 0: 0
                case 1: UInt64.max
                default: random.next()
                }
            }
            let candidate: Self =
                switch random.next() % 8 {
                case 0: modulus.subtracting(.init(random.next() % 3 + 1, 0, 0, 0)).difference
                case 1: .init(random.next() % 3, 0, 0, 0)
                case 2: .init(limb(&random), limb(&random), limb(&random), limb(&random))
                default: .init(random.next(), random.next(), random.next(), random.next())
                }
            if candidate.isLess(than: modulus) { return candidate }
        }
    }
}

extension P256.FieldElement {
    /// The number this element stands for, out of Montgomery form.
    var value: P256.Limbs { (self * P256.FieldElement(montgomery: .init(1, 0, 0, 0))).limbs }
}

extension P256.Scalar {
    /// The number this scalar stands for, out of Montgomery form.
    var value: P256.Limbs { (self * P256.Scalar(montgomery: .init(1, 0, 0, 0))).limbs }
}

extension P256.JacobianPoint {
    /// The affine form, or `nil` at infinity.
    var affine: P256.AffinePoint? {
        guard !isInfinity else { return nil }
        let zInverse = z.inverse
        let zInverse2 = zInverse.squared
        return P256.AffinePoint(x: x * zInverse2, y: y * (zInverse2 * zInverse))
    }
}
