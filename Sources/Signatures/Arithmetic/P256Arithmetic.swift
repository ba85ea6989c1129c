/// Arithmetic on NIST P-256 (secp256r1, prime256v1) for `P256FixedBase`: the field modulo p, scalars modulo the
/// group order n, points, and tables of a point's multiples.
///
/// A number is four 64-bit limbs in a struct, so no operation allocates, and each limb step is a machine instruction
/// or two (`multipliedFullWidth`, `addingReportingOverflow`). Field elements and scalars are kept in Montgomery form
/// (a · 2^256 mod p, or mod n), where a product is reduced without a division. Measured on the 2-core AMD EPYC VM
/// the project is built on (release): a field multiplication 18 ns, a squaring 16 ns, a mixed point addition 0.19 µs,
/// an inversion mod n 8.5–10 µs (by Fermat: 256 squarings and about 70 multiplications).
///
/// Only public data goes through here (keys, signatures, digests): nothing is constant-time. Carries and reductions
/// are branch-free anyway, for speed: a branch on a carry is mispredicted half the time.
///
/// `FixedBaseTables` and README.md beside this file say what this group holds, why, and how the tests hold it to
/// OpenSSL (`P256FixedBaseTests`).
enum P256 {
    /// The field's prime p = 2^256 − 2^224 + 2^192 + 2^96 − 1.
    static let p = Limbs(0xFFFF_FFFF_FFFF_FFFF, 0x0000_0000_FFFF_FFFF, 0, 0xFFFF_FFFF_0000_0001)
    /// The group order n: the number of points on the curve (its cofactor is 1).
    static let n = Limbs(0xF3B9_CAC2_FC63_2551, 0xBCE6_FAAD_A717_9E84, 0xFFFF_FFFF_FFFF_FFFF, 0xFFFF_FFFF_0000_0000)

    /// An integer below 2^256: four 64-bit limbs, least significant first.
    struct Limbs: Equatable, Sendable {
        var l0: UInt64
        var l1: UInt64
        var l2: UInt64
        var l3: UInt64

        @inline(__always)
        init(_ l0: UInt64, _ l1: UInt64, _ l2: UInt64, _ l3: UInt64) {
            (self.l0, self.l1, self.l2, self.l3) = (l0, l1, l2, l3)
        }

        static let zero = Limbs(0, 0, 0, 0)

        /// The big-endian number `bytes` (leading zeros allowed), or `nil` when it is 2^256 or more.
        init?<Bytes: Collection<UInt8>>(bigEndian bytes: Bytes) {
            let significant = bytes.drop { $0 == 0 }
            guard significant.count <= 32 else { return nil }
            var limbs: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
            var shift = 0
            for byte in significant.reversed() {
                let value = UInt64(byte) << UInt64(shift % 64)
                switch shift / 64 {
                case 0: limbs.0 |= value
                case 1: limbs.1 |= value
                case 2: limbs.2 |= value
                default: limbs.3 |= value
                }
                shift += 8
            }
            self.init(limbs.0, limbs.1, limbs.2, limbs.3)
        }

        var isZero: Bool { (l0 | l1 | l2 | l3) == 0 }

        /// `a` where `mask` is all ones, `b` where it is zero.
        @inline(__always)
        static func select(_ a: Limbs, where mask: UInt64, else b: Limbs) -> Limbs {
            Limbs(
                a.l0 & mask | b.l0 & ~mask, a.l1 & mask | b.l1 & ~mask, a.l2 & mask | b.l2 & ~mask,
                a.l3 & mask | b.l3 & ~mask)
        }

        /// The limbs ANDed with `mask`.
        @inline(__always)
        func masked(_ mask: UInt64) -> Limbs { Limbs(l0 & mask, l1 & mask, l2 & mask, l3 & mask) }

        /// Limb `index` (0 the least significant).
        @inline(__always)
        subscript(index: Int) -> UInt64 {
            switch index {
            case 0: l0
            case 1: l1
            case 2: l2
            default: l3
            }
        }

        /// The `width` bits from bit `start` (width ≤ 57), as a table index.
        @inline(__always)
        func bits(from start: Int, width: Int) -> Int {
            let limb = start >> 6
            let shift = start & 63
            var value = self[limb] >> UInt64(shift)
            if shift + width > 64, limb < 3 { value |= self[limb + 1] << UInt64(64 - shift) }
            return Int(truncatingIfNeeded: value & ((1 << UInt64(width)) - 1))
        }

        /// self < other, as unsigned integers.
        @inline(__always)
        func isLess(than other: Limbs) -> Bool {
            subtracting(other).borrow != 0
        }

        /// self − other mod 2^256, and 1 when other > self.
        @inline(__always)
        func subtracting(_ other: Limbs) -> (difference: Limbs, borrow: UInt64) {
            let (d0, b0) = P256.subtract(l0, other.l0, 0)
            let (d1, b1) = P256.subtract(l1, other.l1, b0)
            let (d2, b2) = P256.subtract(l2, other.l2, b1)
            let (d3, b3) = P256.subtract(l3, other.l3, b2)
            return (Limbs(d0, d1, d2, d3), b3)
        }

        /// self + other mod 2^256, and the carry out.
        @inline(__always)
        func adding(_ other: Limbs) -> (sum: Limbs, carry: UInt64) {
            let (s0, c0) = P256.add(l0, other.l0, 0)
            let (s1, c1) = P256.add(l1, other.l1, c0)
            let (s2, c2) = P256.add(l2, other.l2, c1)
            let (s3, c3) = P256.add(l3, other.l3, c2)
            return (Limbs(s0, s1, s2, s3), c3)
        }
    }

    /// 1 for true, 0 for false. A Bool is one byte holding 0 or 1; read as such, no branch is made, where
    /// `flag ? 1 : 0` in a carry chain is compiled into a conditional jump, mispredicted half the time (a field
    /// multiplication took a third longer).
    @inline(__always)
    static func bit(_ flag: Bool) -> UInt64 {
        UInt64(unsafeBitCast(flag, to: UInt8.self))
    }

    /// a + b + carry (carry 0 or 1) and the carry out.
    @inline(__always)
    static func add(_ a: UInt64, _ b: UInt64, _ carry: UInt64) -> (UInt64, UInt64) {
        let (sum, overflow1) = a.addingReportingOverflow(b)
        let (result, overflow2) = sum.addingReportingOverflow(carry)
        return (result, bit(overflow1) | bit(overflow2))
    }

    /// a − b − borrow (borrow 0 or 1) and the borrow out.
    @inline(__always)
    static func subtract(_ a: UInt64, _ b: UInt64, _ borrow: UInt64) -> (UInt64, UInt64) {
        let (difference, overflow1) = a.subtractingReportingOverflow(b)
        let (result, overflow2) = difference.subtractingReportingOverflow(borrow)
        return (result, bit(overflow1) | bit(overflow2))
    }

    /// a · b + c + d as (high, low): never more than 2^128 − 1.
    @inline(__always)
    static func multiplyAdd(_ a: UInt64, _ b: UInt64, _ c: UInt64, _ d: UInt64) -> (high: UInt64, low: UInt64) {
        let (high, low) = a.multipliedFullWidth(by: b)
        let (sum, overflow1) = low.addingReportingOverflow(c)
        let (result, overflow2) = sum.addingReportingOverflow(d)
        return (high &+ bit(overflow1) &+ bit(overflow2), result)
    }

    /// value − modulus when value ≥ modulus, for value = high · 2^256 + low below 2 · modulus.
    @inline(__always)
    static func reduceOnce(_ low: Limbs, high: UInt64, modulus: Limbs) -> Limbs {
        let (difference, borrow) = low.subtracting(modulus)
        // Below the modulus only when nothing was carried out and the subtraction borrowed. Chosen with a mask: a
        // branch on it would be mispredicted half the time.
        return Limbs.select(low, where: 0 &- (borrow & ~high & 1), else: difference)
    }

    /// (value + M · p) / 2^256 mod p for value = t₀ … t₇ (below p · 2^256), M the multiple of p that clears the
    /// low half: the Montgomery reduction of a product.
    ///
    /// p's low limb is 2^64 − 1, so −p⁻¹ mod 2^64 = 1 and each step's multiple of p is the running low limb m;
    /// adding m · p and dropping that limb comes to adding m · 2^32 (from the 2^96 term) and m · (2^64 − 2^32 + 1)
    /// · 2^128 (from the 2^192, 2^224 and 2^256 terms): one multiplication a step, not four. The low half is
    /// reduced alone (it stays below 2^256 at each step, and ends at most p), then the high half is added.
    @inline(__always)
    static func reduceModP(_ t: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64)) -> Limbs {
        var a = (t.0, t.1, t.2, t.3)
        reduceStepModP(&a)
        reduceStepModP(&a)
        reduceStepModP(&a)
        reduceStepModP(&a)
        return addingHighHalf(of: t, to: a, modulus: p)
    }

    @inline(__always)
    private static func reduceStepModP(_ a: inout (UInt64, UInt64, UInt64, UInt64)) {
        let m = a.0
        let (high, low) = m.multipliedFullWidth(by: 0xFFFF_FFFF_0000_0001)
        var carry: UInt64
        (a.0, carry) = add(a.1, m << 32, 0)
        (a.1, carry) = add(a.2, m >> 32, carry)
        (a.2, carry) = add(a.3, low, carry)
        // high is at most 2^64 − 2^32: no carry out (the value stays below p + 2^192).
        a.3 = high &+ carry
    }

    /// The same modulo n, whose −n⁻¹ mod 2^64 is not 1: four multiplications a step.
    @inline(__always)
    static func reduceModN(_ t: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64)) -> Limbs {
        var a = (t.0, t.1, t.2, t.3)
        reduceStepModN(&a)
        reduceStepModN(&a)
        reduceStepModN(&a)
        reduceStepModN(&a)
        return addingHighHalf(of: t, to: a, modulus: n)
    }

    /// The end of a Montgomery reduction: the reduced low half `a` plus the product's high half t₄ … t₇, below twice
    /// the modulus, brought below it.
    @inline(__always)
    private static func addingHighHalf(
        of t: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64),
        to a: (UInt64, UInt64, UInt64, UInt64), modulus: Limbs
    ) -> Limbs {
        var carry: UInt64
        var s = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        (s.0, carry) = add(a.0, t.4, 0)
        (s.1, carry) = add(a.1, t.5, carry)
        (s.2, carry) = add(a.2, t.6, carry)
        (s.3, carry) = add(a.3, t.7, carry)
        return reduceOnce(Limbs(s.0, s.1, s.2, s.3), high: carry, modulus: modulus)
    }

    @inline(__always)
    private static func reduceStepModN(_ a: inout (UInt64, UInt64, UInt64, UInt64)) {
        let m = a.0 &* Scalar.nPrime
        var carry: UInt64
        (carry, _) = multiplyAdd(m, n.l0, a.0, 0)
        (carry, a.0) = multiplyAdd(m, n.l1, a.1, carry)
        (carry, a.1) = multiplyAdd(m, n.l2, a.2, carry)
        (carry, a.2) = multiplyAdd(m, n.l3, a.3, carry)
        a.3 = carry
    }

    /// The schoolbook product x · y, 512 bits.
    @inline(__always)
    static func product(_ x: Limbs, _ y: Limbs) -> (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) {
        var t = (UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        var carry: UInt64
        (carry, t.0) = multiplyAdd(x.l0, y.l0, 0, 0)
        (carry, t.1) = multiplyAdd(x.l1, y.l0, 0, carry)
        (carry, t.2) = multiplyAdd(x.l2, y.l0, 0, carry)
        (t.4, t.3) = multiplyAdd(x.l3, y.l0, 0, carry)
        (carry, t.1) = multiplyAdd(x.l0, y.l1, t.1, 0)
        (carry, t.2) = multiplyAdd(x.l1, y.l1, t.2, carry)
        (carry, t.3) = multiplyAdd(x.l2, y.l1, t.3, carry)
        (t.5, t.4) = multiplyAdd(x.l3, y.l1, t.4, carry)
        (carry, t.2) = multiplyAdd(x.l0, y.l2, t.2, 0)
        (carry, t.3) = multiplyAdd(x.l1, y.l2, t.3, carry)
        (carry, t.4) = multiplyAdd(x.l2, y.l2, t.4, carry)
        (t.6, t.5) = multiplyAdd(x.l3, y.l2, t.5, carry)
        (carry, t.3) = multiplyAdd(x.l0, y.l3, t.3, 0)
        (carry, t.4) = multiplyAdd(x.l1, y.l3, t.4, carry)
        (carry, t.5) = multiplyAdd(x.l2, y.l3, t.5, carry)
        (t.7, t.6) = multiplyAdd(x.l3, y.l3, t.6, carry)
        return t
    }

    /// x², 512 bits: each cross product once, doubled, then the squares of the limbs (10 multiplications, not 16).
    @inline(__always)
    static func square(_ x: Limbs) -> (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) {
        var carry: UInt64
        var t = (UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        (carry, t.1) = multiplyAdd(x.l0, x.l1, 0, 0)
        (carry, t.2) = multiplyAdd(x.l0, x.l2, 0, carry)
        (t.4, t.3) = multiplyAdd(x.l0, x.l3, 0, carry)
        (carry, t.3) = multiplyAdd(x.l1, x.l2, t.3, 0)
        (t.5, t.4) = multiplyAdd(x.l1, x.l3, t.4, carry)
        (t.6, t.5) = multiplyAdd(x.l2, x.l3, t.5, 0)
        // Twice the cross products.
        t.7 = t.6 >> 63
        t.6 = t.6 << 1 | t.5 >> 63
        t.5 = t.5 << 1 | t.4 >> 63
        t.4 = t.4 << 1 | t.3 >> 63
        t.3 = t.3 << 1 | t.2 >> 63
        t.2 = t.2 << 1 | t.1 >> 63
        t.1 = t.1 << 1
        // Plus the squares on the diagonal.
        let (h0, l0) = x.l0.multipliedFullWidth(by: x.l0)
        let (h1, l1) = x.l1.multipliedFullWidth(by: x.l1)
        let (h2, l2) = x.l2.multipliedFullWidth(by: x.l2)
        let (h3, l3) = x.l3.multipliedFullWidth(by: x.l3)
        t.0 = l0
        (t.1, carry) = add(t.1, h0, 0)
        (t.2, carry) = add(t.2, l1, carry)
        (t.3, carry) = add(t.3, h1, carry)
        (t.4, carry) = add(t.4, l2, carry)
        (t.5, carry) = add(t.5, h2, carry)
        (t.6, carry) = add(t.6, l3, carry)
        (t.7, _) = add(t.7, h3, carry)
        return t
    }
}

extension P256 {
    /// An element of the field modulo p in Montgomery form (a · 2^256 mod p), always below p.
    struct FieldElement: Equatable, Sendable {
        var limbs: Limbs

        @inline(__always)
        init(montgomery limbs: Limbs) { self.limbs = limbs }

        /// 2^256 mod p: 1 in Montgomery form.
        static let one = FieldElement(
            montgomery: Limbs(1, 0xFFFF_FFFF_0000_0000, 0xFFFF_FFFF_FFFF_FFFF, 0x0000_0000_FFFF_FFFE))
        /// 2^512 mod p, which turns a number into Montgomery form by one multiplication.
        static let rSquared = FieldElement(
            montgomery: Limbs(3, 0xFFFF_FFFB_FFFF_FFFF, 0xFFFF_FFFF_FFFF_FFFE, 0x0000_0004_FFFF_FFFD))
        /// The curve's b (y² = x³ − 3x + b, b = 0x5AC635D8…27D2604B), in Montgomery form.
        static let b = FieldElement(
            montgomery: Limbs(
                0xD89C_DF62_29C4_BDDF, 0xACF0_05CD_7884_3090, 0xE5A2_20AB_F721_2ED6, 0xDC30_061D_0487_4834))

        /// `value` (below p) in Montgomery form, or `nil` when it is p or more.
        @inline(__always)
        init?(_ value: Limbs) {
            guard value.isLess(than: P256.p) else { return nil }
            self = FieldElement(montgomery: value) * Self.rSquared
        }

        var isZero: Bool { limbs.isZero }

        @inline(__always)
        static func + (a: FieldElement, b: FieldElement) -> FieldElement {
            let (sum, carry) = a.limbs.adding(b.limbs)
            return FieldElement(montgomery: P256.reduceOnce(sum, high: carry, modulus: P256.p))
        }

        @inline(__always)
        static func - (a: FieldElement, b: FieldElement) -> FieldElement {
            let (difference, borrow) = a.limbs.subtracting(b.limbs)
            // p added back when it borrowed, with a mask rather than a branch (mispredicted half the time).
            return FieldElement(montgomery: difference.adding(P256.p.masked(0 &- borrow)).sum)
        }

        /// a · b · 2^−256 mod p (Montgomery multiplication).
        @inline(__always)
        static func * (a: FieldElement, b: FieldElement) -> FieldElement {
            FieldElement(montgomery: P256.reduceModP(P256.product(a.limbs, b.limbs)))
        }

        /// self² · 2^−256 mod p.
        @inline(__always)
        var squared: FieldElement {
            FieldElement(montgomery: P256.reduceModP(P256.square(limbs)))
        }

    }
}

/// Numbers modulo p or n in Montgomery form, with the operations `P256.power` needs.
protocol P256Residue {
    /// p or n.
    static var modulus: P256.Limbs { get }
    static var one: Self { get }
    static func * (a: Self, b: Self) -> Self
    var squared: Self { get }
}

extension P256Residue {
    /// self⁻¹ (by Fermat: self^(modulus − 2)); zero for zero.
    var inverse: Self {
        P256.power(self, Self.modulus.subtracting(P256.Limbs(2, 0, 0, 0)).difference)
    }
}

extension P256.FieldElement: P256Residue {
    static var modulus: P256.Limbs { P256.p }
}

extension P256.Scalar: P256Residue {
    static var modulus: P256.Limbs { P256.n }
}

extension P256 {
    /// base^exponent, by 4-bit windows from the top.
    @inline(__always)
    static func power<Element: P256Residue>(_ base: Element, _ exponent: Limbs) -> Element {
        withUnsafeTemporaryAllocation(of: Element.self, capacity: 16) { powers in
            powers.initialize(repeating: .one)
            for index in 1..<16 { powers[index] = powers[index - 1] * base }
            var result = Element.one
            for window in stride(from: 63, through: 0, by: -1) {
                result = result.squared.squared.squared.squared
                let digit = exponent.bits(from: 4 * window, width: 4)
                if digit != 0 { result = result * powers[digit] }
            }
            return result
        }
    }
}

extension P256 {
    /// A scalar modulo n in Montgomery form (a · 2^256 mod n), always below n.
    struct Scalar: Equatable, Sendable {
        var limbs: Limbs

        @inline(__always)
        init(montgomery limbs: Limbs) { self.limbs = limbs }

        /// −n⁻¹ mod 2^64, for the reduction.
        static let nPrime: UInt64 = 0xCCD1_C8AA_EE00_BC4F
        /// 2^256 mod n: 1 in Montgomery form.
        static let one = Scalar(montgomery: Limbs(0x0C46_353D_039C_DAAF, 0x4319_0552_58E8_617B, 0, 0xFFFF_FFFF))
        /// 2^512 mod n.
        static let rSquared = Scalar(
            montgomery: Limbs(
                0x8324_4C95_BE79_EEA2, 0x4699_799C_49BD_6FA6, 0x2845_B239_2B6B_EC59, 0x66E1_2D94_F3D9_5620))

        /// `value` (below n) in Montgomery form.
        @inline(__always)
        init(_ value: Limbs) {
            self = Scalar(montgomery: value) * Self.rSquared
        }

        /// a · b · 2^−256 mod n (Montgomery multiplication).
        @inline(__always)
        static func * (a: Scalar, b: Scalar) -> Scalar {
            Scalar(montgomery: P256.reduceModN(P256.product(a.limbs, b.limbs)))
        }

        /// self² · 2^−256 mod n.
        @inline(__always)
        var squared: Scalar {
            Scalar(montgomery: P256.reduceModN(P256.square(limbs)))
        }

    }
}

extension P256 {
    /// A point other than infinity in affine coordinates, in Montgomery form.
    struct AffinePoint: Equatable, Sendable {
        var x: FieldElement
        var y: FieldElement

        /// The generator G of the standard (x = 0x6B17D1F2…D898C296, y = 0x4FE342E2…37BF51F5), in Montgomery form.
        static let generator = AffinePoint(
            x: FieldElement(
                montgomery: Limbs(
                    0x79E7_30D4_18A9_143C, 0x75BA_95FC_5FED_B601, 0x79FB_732B_7762_2510, 0x1890_5F76_A537_55C6)),
            y: FieldElement(
                montgomery: Limbs(
                    0xDDF2_5357_CE95_560A, 0x8B4A_B8E4_BA19_E45C, 0xD2E8_8688_DD21_F325, 0x8571_FF18_2588_5D85)))

        /// Whether the point satisfies y² = x³ − 3x + b.
        var isOnCurve: Bool {
            let threeX = x + x + x
            return y.squared == x.squared * x - threeX + FieldElement.b
        }
    }

    /// A point in Jacobian coordinates (X / Z², Y / Z³), or infinity.
    struct JacobianPoint: Sendable {
        var x: FieldElement
        var y: FieldElement
        var z: FieldElement
        var isInfinity: Bool

        static let infinity = JacobianPoint(x: .one, y: .one, z: FieldElement(montgomery: .zero), isInfinity: true)

        @inline(__always)
        init(x: FieldElement, y: FieldElement, z: FieldElement, isInfinity: Bool) {
            (self.x, self.y, self.z, self.isInfinity) = (x, y, z, isInfinity)
        }

        @inline(__always)
        init(_ point: AffinePoint) {
            self.init(x: point.x, y: point.y, z: .one, isInfinity: false)
        }

        /// self += point (mixed addition, 8 multiplications and 3 squarings), for every case: self at infinity, the
        /// two the same point (then a doubling), or one the other's negative (then infinity).
        @inline(__always)
        mutating func add(_ point: AffinePoint) {
            if isInfinity {
                self = JacobianPoint(point)
                return
            }
            let zz = z.squared
            let u2 = point.x * zz
            let s2 = point.y * (z * zz)
            let h = u2 - x
            let r = s2 - y
            if h.isZero {
                // Same x: the same point, or its negative.
                if r.isZero { double() } else { self = .infinity }
                return
            }
            let hh = h.squared
            let hhh = h * hh
            let v = x * hh
            let x3 = r.squared - hhh - (v + v)
            y = r * (v - x3) - y * hhh
            x = x3
            z = z * h
        }

        /// self = 2 · self (for a = −3: 3 multiplications and 5 squarings).
        mutating func double() {
            guard !isInfinity else { return }
            // No point of P-256 has order 2; a y of zero would be one.
            guard !y.isZero else {
                self = .infinity
                return
            }
            let delta = z.squared
            let gamma = y.squared
            let beta = x * gamma
            let difference = x - delta
            let alpha = (difference + difference + difference) * (x + delta)
            let beta2 = beta + beta
            let beta4 = beta2 + beta2
            let x3 = alpha.squared - (beta4 + beta4)
            let z3 = (y + z).squared - gamma - delta
            let gammaSquared = gamma.squared
            let gammaSquared2 = gammaSquared + gammaSquared
            let gammaSquared4 = gammaSquared2 + gammaSquared2
            y = alpha * (beta4 - x3) - (gammaSquared4 + gammaSquared4)
            x = x3
            z = z3
        }

        /// Whether this point's affine x, reduced mod n, is r (below n): x = r · Z², or x = (r + n) · Z² when r + n
        /// is below p. Never true at infinity.
        func hasXModN(equalTo r: Limbs) -> Bool {
            guard !isInfinity else { return false }
            let zz = z.squared
            guard let rField = FieldElement(r) else { return false }
            if rField * zz == x { return true }
            let (rPlusN, carry) = r.adding(P256.n)
            guard carry == 0, let rPlusNField = FieldElement(rPlusN) else { return false }
            return rPlusNField * zz == x
        }
    }
}

extension P256 {
    /// A point's multiples for fixed-window scalar multiplication: for each window i of `width` bits and each digit
    /// d from 1 to 2^width − 1, d · 2^(width · i) · P in affine form. k · P is then one mixed addition per non-zero
    /// digit of k, and no doubling.
    struct Table: Sendable {
        /// Bits per window.
        static let width = 8
        static let windows = (256 + width - 1) / width
        static let digits = (1 << width) - 1
        /// Bytes of a table: two field elements per entry.
        static let byteCount = windows * digits * MemoryLayout<AffinePoint>.stride

        /// Window i, digit d at i · digits + d − 1.
        let entries: [AffinePoint]

        /// The table of `point` (on the curve), or `nil` if one of its multiples came out at infinity. None can: every
        /// point of P-256 has the prime order n, and each multiple is k · P with 0 < k < 2^256, k ≠ n (n is odd).
        init?(_ point: AffinePoint) {
            var entries: [AffinePoint] = []
            entries.reserveCapacity(Self.windows * Self.digits)
            // The row's multiples 1 · B … 2^width · B in Jacobian form; the last is the next row's B.
            var row = [JacobianPoint](repeating: .infinity, count: Self.digits + 1)
            var base = point
            for window in 0..<Self.windows {
                let count = window == Self.windows - 1 ? Self.digits : Self.digits + 1
                row[0] = JacobianPoint(base)
                for index in 1..<count {
                    row[index] = row[index - 1]
                    row[index].add(base)
                }
                guard let affine = Self.affine(row[0..<count]) else { return nil }
                entries.append(contentsOf: affine[0..<Self.digits])
                if count > Self.digits { base = affine[Self.digits] }
            }
            self.entries = entries
        }

        /// The points in affine form with one inversion for them all (Montgomery's trick), or `nil` if one is at
        /// infinity.
        private static func affine(_ points: ArraySlice<JacobianPoint>) -> [AffinePoint]? {
            guard points.allSatisfy({ !$0.isInfinity && !$0.z.isZero }) else { return nil }
            // products[i] = z₀ · … · zᵢ
            var products: [FieldElement] = []
            products.reserveCapacity(points.count)
            var product = FieldElement.one
            for point in points {
                product = product * point.z
                products.append(product)
            }
            var inverse = product.inverse
            var result = [AffinePoint](
                repeating: AffinePoint(x: .one, y: .one), count: points.count)
            for index in stride(from: points.count - 1, through: 0, by: -1) {
                let point = points[points.startIndex + index]
                // inverse is (z₀ · … · zᵢ)⁻¹ here.
                let zInverse = index == 0 ? inverse : inverse * products[index - 1]
                inverse = inverse * point.z
                let zInverse2 = zInverse.squared
                result[index] = AffinePoint(x: point.x * zInverse2, y: point.y * (zInverse2 * zInverse))
            }
            return result
        }

        /// accumulator += k · P, for P this table's point.
        @inline(__always)
        func multiply(_ scalar: Limbs, into accumulator: inout JacobianPoint) {
            entries.withUnsafeBufferPointer { entries in
                for window in 0..<Self.windows {
                    let digit = scalar.bits(from: window * Self.width, width: Self.width)
                    if digit != 0 { accumulator.add(entries[window * Self.digits + digit - 1]) }
                }
            }
        }
    }
}
