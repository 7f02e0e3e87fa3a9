/// A small deterministic generator (SplitMix64): the same seed gives the same stream on every platform, so demo
/// weights, seeded fault plans and randomized test rounds repeat themselves.
package struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    package init(seed: UInt64) { state = seed }

    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }

    /// Uniform in [0, 1), from the top 53 bits.
    package mutating func nextUnit() -> Double { Double(next() >> 11) / Double(1 << 53) }
}
