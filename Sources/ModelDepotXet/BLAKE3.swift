/// BLAKE3 (the BLAKE3 specification, "BLAKE3: one function, fast everywhere", §2), in plain and keyed mode: the
/// hash Xet names chunks, xorbs and files with (Xet documentation, "Hashing"). Streaming, one thread, portable
/// Swift (no SIMD instructions of its own); the tree is built as the specification's §5.1.2 describes, a stack of
/// chaining values merged as chunks complete.
///
/// ```swift
/// var hasher = BLAKE3(key: XetHash.dataKey)
/// hasher.update(bytes)
/// let digest = hasher.finalize()   // 32 bytes
/// ```
public struct BLAKE3: Sendable {
    typealias Words8 = SIMD8<UInt32>
    typealias Words16 = SIMD16<UInt32>

    static let iv = Words8(
        0x6A09_E667, 0xBB67_AE85, 0x3C6E_F372, 0xA54F_F53A, 0x510E_527F, 0x9B05_688C, 0x1F83_D9AB, 0x5BE0_CD19)

    enum Flag {
        static let chunkStart: UInt32 = 1
        static let chunkEnd: UInt32 = 2
        static let parent: UInt32 = 4
        static let root: UInt32 = 8
        static let keyedHash: UInt32 = 16
    }

    static let blockLength = 64
    static let chunkLength = 1024

    private let key: Words8
    private let flags: UInt32
    /// The chunk being hashed: its chaining value so far, its index, its buffered block.
    private var chunkValue: Words8
    private var chunkCounter: UInt64 = 0
    private var block = Words16()
    private var blockBytes = [UInt8](repeating: 0, count: 64)
    private var blockFill = 0
    private var blocksCompressed = 0
    /// Chaining values of completed subtrees, one per set bit of the number of chunks done (§5.1.2).
    private var stack: [Words8] = []

    /// A hasher in plain mode.
    public init() {
        self.init(keyWords: Self.iv, flags: 0)
    }

    /// A hasher in keyed mode: `key` is 32 bytes.
    public init(key: [UInt8]) {
        precondition(key.count == 32, "a BLAKE3 key is 32 bytes")
        let words = key.withUnsafeBytes { raw in
            Words8((0..<8).map { UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: 4 * $0, as: UInt32.self)) })
        }
        self.init(keyWords: words, flags: Flag.keyedHash)
    }

    private init(keyWords: Words8, flags: UInt32) {
        key = keyWords
        self.flags = flags
        chunkValue = keyWords
    }

    /// The digest of `bytes` in one call.
    public static func hash(_ bytes: some Collection<UInt8>, key: [UInt8]? = nil) -> [UInt8] {
        var hasher = key.map(BLAKE3.init(key:)) ?? BLAKE3()
        if let done = bytes.withContiguousStorageIfAvailable({ buffer in
            hasher.update(UnsafeRawBufferPointer(buffer))
        }) {
            _ = done
        } else {
            hasher.update(Array(bytes))
        }
        return hasher.finalize()
    }

    public mutating func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        var index = 0
        let count = bytes.count
        while index < count {
            // Whole chunks straight from the input while more input follows them (the last bytes must wait: the
            // final chunk's last block carries ROOT); several side by side when there are enough.
            if blockFill == 0, blocksCompressed == 0, count - index > Self.laneCount * Self.chunkLength {
                for value in Self.chunkValues(bytes, at: index, key: key, counter: chunkCounter, flags: flags) {
                    addChunk(value)
                }
                index += Self.laneCount * Self.chunkLength
                continue
            }
            if blockFill == 0, blocksCompressed == 0, count - index > Self.chunkLength {
                var value = key
                for blockIndex in 0..<16 {
                    let words = Self.load(bytes, at: index + 64 * blockIndex)
                    var blockFlags = flags
                    if blockIndex == 0 { blockFlags |= Flag.chunkStart }
                    if blockIndex == 15 { blockFlags |= Flag.chunkEnd }
                    value = Self.chainingValue(
                        Self.compress(value, words, counter: chunkCounter, blockLength: 64, flags: blockFlags))
                }
                addChunk(value)
                index += Self.chunkLength
                continue
            }
            // A full buffered block is compressed only once more input follows.
            if blockFill == Self.blockLength {
                block = blockBytes.withUnsafeBytes { Self.load($0, at: 0) }
                if blocksCompressed == 15 {
                    addChunk(chunkOutput().chainingValue())
                } else {
                    let start = blocksCompressed == 0 ? Flag.chunkStart : 0
                    chunkValue = Self.chainingValue(
                        Self.compress(chunkValue, block, counter: chunkCounter, blockLength: 64, flags: flags | start))
                    blocksCompressed += 1
                    blockFill = 0
                }
            }
            let take = min(Self.blockLength - blockFill, count - index)
            blockBytes.withUnsafeMutableBytes { target in
                target.baseAddress!.advanced(by: blockFill).copyMemory(
                    from: bytes.baseAddress!.advanced(by: index), byteCount: take)
            }
            blockFill += take
            index += take
        }
    }

    /// The 32-byte digest of everything given so far.
    public func finalize() -> [UInt8] {
        var output = chunkOutput()
        for value in stack.reversed() {
            output = Output(
                input: key, message: Self.join(value, output.chainingValue()), counter: 0, blockLength: 64,
                flags: Flag.parent | flags)
        }
        return output.rootBytes()
    }

    /// A chunk done: its chaining value merged into the tree as far as the count of chunks allows.
    private mutating func addChunk(_ chunk: Words8) {
        var value = chunk
        chunkCounter += 1
        var done = chunkCounter
        while done & 1 == 0 {
            let left = stack.removeLast()
            value = Self.chainingValue(
                Self.compress(key, Self.join(left, value), counter: 0, blockLength: 64, flags: Flag.parent | flags))
            done >>= 1
        }
        stack.append(value)
        chunkValue = key
        blocksCompressed = 0
        blockFill = 0
    }

    private func chunkOutput() -> Output {
        var last = blockBytes
        for index in blockFill..<Self.blockLength { last[index] = 0 }
        let start = blocksCompressed == 0 ? Flag.chunkStart : 0
        return Output(
            input: chunkValue, message: last.withUnsafeBytes { Self.load($0, at: 0) }, counter: chunkCounter,
            blockLength: UInt32(blockFill), flags: flags | start | Flag.chunkEnd)
    }

    /// What a compression will produce, kept so the root can be taken with the ROOT flag (§2.5, §2.6).
    private struct Output {
        var input: Words8
        var message: Words16
        var counter: UInt64
        var blockLength: UInt32
        var flags: UInt32

        func chainingValue() -> Words8 {
            BLAKE3.chainingValue(
                BLAKE3.compress(input, message, counter: counter, blockLength: blockLength, flags: flags))
        }

        func rootBytes() -> [UInt8] {
            let words = BLAKE3.compress(input, message, counter: 0, blockLength: blockLength, flags: flags | Flag.root)
            var bytes = [UInt8](repeating: 0, count: 32)
            for index in 0..<8 {
                let word = words[index]
                for byte in 0..<4 { bytes[4 * index + byte] = UInt8(truncatingIfNeeded: word >> (8 * UInt32(byte))) }
            }
            return bytes
        }
    }

    @inline(__always) static func load(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> Words16 {
        var words = Words16()
        for index in 0..<16 {
            words[index] = UInt32(
                littleEndian: bytes.loadUnaligned(fromByteOffset: offset + 4 * index, as: UInt32.self))
        }
        return words
    }

    @inline(__always) static func join(_ left: Words8, _ right: Words8) -> Words16 {
        Words16(lowHalf: left, highHalf: right)
    }

    @inline(__always) static func chainingValue(_ state: Words16) -> Words8 { state.lowHalf }

    /// The compression function (§2.2): 7 rounds of the G function over the 16-word state, the message words
    /// permuted between rounds; the first 8 words of the result are the next chaining value.
    @inline(__always)
    static func compress(_ value: Words8, _ message: Words16, counter: UInt64, blockLength: UInt32, flags: UInt32)
        -> Words16
    {
        var v0 = value[0]
        var v1 = value[1]
        var v2 = value[2]
        var v3 = value[3]
        var v4 = value[4]
        var v5 = value[5]
        var v6 = value[6]
        var v7 = value[7]
        var v8 = iv[0]
        var v9 = iv[1]
        var v10 = iv[2]
        var v11 = iv[3]
        var v12 = UInt32(truncatingIfNeeded: counter)
        var v13 = UInt32(truncatingIfNeeded: counter >> 32)
        var v14 = blockLength
        var v15 = flags
        var (m0, m1, m2, m3, m4, m5, m6, m7) = (
            message[0], message[1], message[2], message[3], message[4], message[5], message[6], message[7]
        )
        var (m8, m9, m10, m11, m12, m13, m14, m15) = (
            message[8], message[9], message[10], message[11], message[12], message[13], message[14], message[15]
        )
        for round in 0..<7 {
            g(&v0, &v4, &v8, &v12, m0, m1)
            g(&v1, &v5, &v9, &v13, m2, m3)
            g(&v2, &v6, &v10, &v14, m4, m5)
            g(&v3, &v7, &v11, &v15, m6, m7)
            g(&v0, &v5, &v10, &v15, m8, m9)
            g(&v1, &v6, &v11, &v12, m10, m11)
            g(&v2, &v7, &v8, &v13, m12, m13)
            g(&v3, &v4, &v9, &v14, m14, m15)
            if round < 6 {
                // The message permutation (§2.2); m1 and m5 move to the second half, kept before the first is
                // overwritten.
                let (old1, old5) = (m1, m5)
                (m0, m1, m2, m3, m4, m5, m6, m7) = (m2, m6, m3, m10, m7, m0, m4, m13)
                (m8, m9, m10, m11, m12, m13, m14, m15) = (old1, m11, m12, old5, m9, m14, m15, m8)
            }
        }
        return Words16(
            v0 ^ v8, v1 ^ v9, v2 ^ v10, v3 ^ v11, v4 ^ v12, v5 ^ v13, v6 ^ v14, v7 ^ v15,
            v8 ^ value[0], v9 ^ value[1], v10 ^ value[2], v11 ^ value[3], v12 ^ value[4], v13 ^ value[5],
            v14 ^ value[6], v15 ^ value[7])
    }

    @inline(__always)
    static func g(
        _ a: inout UInt32, _ b: inout UInt32, _ c: inout UInt32, _ d: inout UInt32, _ x: UInt32, _ y: UInt32
    ) {
        a = a &+ b &+ x
        d = rotate(d ^ a, 16)
        c = c &+ d
        b = rotate(b ^ c, 12)
        a = a &+ b &+ y
        d = rotate(d ^ a, 8)
        c = c &+ d
        b = rotate(b ^ c, 7)
    }

    @inline(__always) static func rotate(_ word: UInt32, _ count: UInt32) -> UInt32 {
        (word >> count) | (word << (32 - count))
    }
}
