/// A small, fast random number generator that gives the same sequence for the same seed (SplitMix64).
///
/// Distortions and generated test scenes use it so that every run sees the same images.
public struct SeededRandomNumberGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// Creates a generator; equal seeds give equal sequences.
    public init(seed: UInt64) {
        state = seed
    }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }

    /// A normally distributed value (Box–Muller).
    public mutating func nextGaussian(mean: Double = 0, standardDeviation: Double = 1) -> Double {
        let first = Double.random(in: Double.ulpOfOne..<1, using: &self)
        let second = Double.random(in: 0..<1, using: &self)
        return mean + standardDeviation * (-2 * log(first)).squareRoot() * cos(2 * Double.pi * second)
    }
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
