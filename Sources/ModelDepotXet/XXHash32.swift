/// xxHash32 (the xxHash specification, "XXH32 Algorithm Description"): the checksum LZ4 frames carry over their
/// descriptor, blocks and content. Not a defence against an attacker — BLAKE3 is that — but what every LZ4 frame
/// reader checks, so a frame this side accepts is one the other side's reader accepts too.
public enum XXHash32 {
    static let prime1: UInt32 = 0x9E37_79B1
    static let prime2: UInt32 = 0x85EB_CA77
    static let prime3: UInt32 = 0xC2B2_AE3D
    static let prime4: UInt32 = 0x27D4_EB2F
    static let prime5: UInt32 = 0x1656_67B1

    public static func hash(_ bytes: some Collection<UInt8>, seed: UInt32 = 0) -> UInt32 {
        let input = Array(bytes)
        return input.withUnsafeBufferPointer { hash($0, seed: seed) }
    }

    static func hash(_ input: UnsafeBufferPointer<UInt8>, seed: UInt32) -> UInt32 {
        func word(_ at: Int) -> UInt32 {
            UInt32(input[at]) | UInt32(input[at + 1]) << 8 | UInt32(input[at + 2]) << 16 | UInt32(input[at + 3]) << 24
        }
        func rotate(_ value: UInt32, _ count: UInt32) -> UInt32 { value << count | value >> (32 - count) }
        func round(_ accumulator: UInt32, _ lane: UInt32) -> UInt32 {
            rotate(accumulator &+ lane &* prime2, 13) &* prime1
        }
        var at = 0
        var hash: UInt32
        if input.count >= 16 {
            var lanes = (seed &+ prime1 &+ prime2, seed &+ prime2, seed, seed &- prime1)
            while input.count - at >= 16 {
                lanes.0 = round(lanes.0, word(at))
                lanes.1 = round(lanes.1, word(at + 4))
                lanes.2 = round(lanes.2, word(at + 8))
                lanes.3 = round(lanes.3, word(at + 12))
                at += 16
            }
            hash = rotate(lanes.0, 1) &+ rotate(lanes.1, 7) &+ rotate(lanes.2, 12) &+ rotate(lanes.3, 18)
        } else {
            hash = seed &+ prime5
        }
        hash = hash &+ UInt32(truncatingIfNeeded: input.count)
        while input.count - at >= 4 {
            hash = rotate(hash &+ word(at) &* prime3, 17) &* prime4
            at += 4
        }
        while at < input.count {
            hash = rotate(hash &+ UInt32(input[at]) &* prime5, 11) &* prime1
            at += 1
        }
        hash ^= hash >> 15
        hash = hash &* prime2
        hash ^= hash >> 13
        hash = hash &* prime3
        hash ^= hash >> 16
        return hash
    }
}
