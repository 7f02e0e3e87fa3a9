extension BLAKE3 {
    typealias Lanes = SIMD4<UInt32>
    /// Chunks hashed side by side, one a vector lane (the specification's §5.3, "SIMD across chunks"): the compiler
    /// turns each lane operation into vector instructions.
    static let laneCount = 4

    /// The chaining values of the `laneCount` whole chunks that start at `offset` in `bytes` (none of them the
    /// root), numbered from `counter`.
    static func chunkValues(
        _ bytes: UnsafeRawBufferPointer, at offset: Int, key: Words8, counter: UInt64, flags: UInt32
    ) -> [Words8] {
        var h0 = Lanes(repeating: key[0])
        var h1 = Lanes(repeating: key[1])
        var h2 = Lanes(repeating: key[2])
        var h3 = Lanes(repeating: key[3])
        var h4 = Lanes(repeating: key[4])
        var h5 = Lanes(repeating: key[5])
        var h6 = Lanes(repeating: key[6])
        var h7 = Lanes(repeating: key[7])
        var counterLow = Lanes()
        var counterHigh = Lanes()
        for lane in 0..<laneCount {
            counterLow[lane] = UInt32(truncatingIfNeeded: counter + UInt64(lane))
            counterHigh[lane] = UInt32(truncatingIfNeeded: (counter + UInt64(lane)) >> 32)
        }
        for block in 0..<16 {
            // The block's message words, transposed: word w of every chunk in one vector.
            @inline(__always) func word(_ word: Int) -> Lanes {
                var vector = Lanes()
                for lane in 0..<laneCount {
                    vector[lane] = UInt32(
                        littleEndian: bytes.loadUnaligned(
                            fromByteOffset: offset + lane * chunkLength + block * blockLength + 4 * word,
                            as: UInt32.self))
                }
                return vector
            }
            var (m0, m1, m2, m3, m4, m5, m6, m7) = (
                word(0), word(1), word(2), word(3), word(4), word(5), word(6), word(7)
            )
            var (m8, m9, m10, m11, m12, m13, m14, m15) = (
                word(8), word(9), word(10), word(11), word(12), word(13), word(14), word(15)
            )
            var blockFlags = flags
            if block == 0 { blockFlags |= Flag.chunkStart }
            if block == 15 { blockFlags |= Flag.chunkEnd }
            var v0 = h0
            var v1 = h1
            var v2 = h2
            var v3 = h3
            var v4 = h4
            var v5 = h5
            var v6 = h6
            var v7 = h7
            var v8 = Lanes(repeating: iv[0])
            var v9 = Lanes(repeating: iv[1])
            var v10 = Lanes(repeating: iv[2])
            var v11 = Lanes(repeating: iv[3])
            var v12 = counterLow
            var v13 = counterHigh
            var v14 = Lanes(repeating: UInt32(blockLength))
            var v15 = Lanes(repeating: blockFlags)
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
                    // The message permutation (§2.2).
                    // m1 and m5 move to the second half: kept before the first half is overwritten.
                    let (old1, old5) = (m1, m5)
                    (m0, m1, m2, m3, m4, m5, m6, m7) = (m2, m6, m3, m10, m7, m0, m4, m13)
                    (m8, m9, m10, m11, m12, m13, m14, m15) = (old1, m11, m12, old5, m9, m14, m15, m8)
                }
            }
            h0 = v0 ^ v8
            h1 = v1 ^ v9
            h2 = v2 ^ v10
            h3 = v3 ^ v11
            h4 = v4 ^ v12
            h5 = v5 ^ v13
            h6 = v6 ^ v14
            h7 = v7 ^ v15
        }
        return (0..<laneCount).map { lane in
            Words8(h0[lane], h1[lane], h2[lane], h3[lane], h4[lane], h5[lane], h6[lane], h7[lane])
        }
    }

    @inline(__always)
    static func g(_ a: inout Lanes, _ b: inout Lanes, _ c: inout Lanes, _ d: inout Lanes, _ x: Lanes, _ y: Lanes) {
        a = a &+ b &+ x
        d = rotate(d ^ a, 16)
        c = c &+ d
        b = rotate(b ^ c, 12)
        a = a &+ b &+ y
        d = rotate(d ^ a, 8)
        c = c &+ d
        b = rotate(b ^ c, 7)
    }

    @inline(__always) static func rotate(_ word: Lanes, _ count: UInt32) -> Lanes {
        (word &>> count) | (word &<< (32 - count))
    }
}
