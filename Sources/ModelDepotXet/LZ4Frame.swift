/// LZ4's frame format (lz4's "LZ4 Frame Format Description"), what Xet stores a compressed chunk as (schemes `LZ4`
/// and `ByteGrouping4LZ4`; xet-core compresses with lz4_flex's `FrameEncoder`): a magic number, a descriptor (flags,
/// the largest block size, optionally the content size and a dictionary id, a header checksum), blocks — each a
/// 4-byte length whose top bit marks it stored uncompressed, its bytes, optionally a checksum — an end mark, and
/// optionally a content checksum. Every xxHash32 checksum the frame carries is verified, as lz4_flex's
/// `FrameDecoder` verifies them (a frame accepted here must be one hf_xet can read), and a frame that is not exactly
/// one frame of exactly the expected size is refused. Checksums guard against accidents only: a chunk's BLAKE3 hash
/// is what proves its bytes.
public enum LZ4Frame {
    static let magic: [UInt8] = [0x04, 0x22, 0x4d, 0x18]

    /// The bytes `frame` decompresses to, which must be exactly `size` bytes.
    public static func decompress(_ frame: some Collection<UInt8>, size: Int) throws -> [UInt8] {
        guard size >= 0 else { throw LZ4Block.Malformed(description: "a size of \(size) bytes") }
        let input = Array(frame)
        guard input.count >= 7, Array(input[0..<4]) == magic else {
            throw LZ4Block.Malformed(description: "not an LZ4 frame (no magic number)")
        }
        let flags = input[4]
        let descriptor = input[5]
        guard flags >> 6 == 1 else { throw LZ4Block.Malformed(description: "an LZ4 frame of version \(flags >> 6)") }
        guard flags & 0b10 == 0, descriptor & 0b1000_1111 == 0 else {
            throw LZ4Block.Malformed(description: "an LZ4 frame with reserved bits set")
        }
        guard flags & 1 == 0 else { throw LZ4Block.Malformed(description: "an LZ4 frame that needs a dictionary") }
        let independent = flags & 0b10_0000 != 0
        let blockChecksums = flags & 0b1_0000 != 0
        let contentChecksum = flags & 0b100 != 0
        let sizeCode = Int(descriptor >> 4)
        guard sizeCode >= 4 else {
            throw LZ4Block.Malformed(description: "an LZ4 frame of block size code \(sizeCode)")
        }
        let maximumBlock = 1 << (8 + 2 * sizeCode)
        var read = 6
        if flags & 0b1000 != 0 {
            guard input.count - read >= 8 else { throw LZ4Block.Malformed(description: "an LZ4 frame is cut off") }
            let declared = input[read..<(read + 8)].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            guard declared == UInt64(size) else {
                throw LZ4Block.Malformed(description: "an LZ4 frame of \(declared) bytes, not \(size)")
            }
            read += 8
        }
        // The header checksum: the second byte of the xxHash32 of the descriptor (flags to the last optional field).
        guard input.count > read, UInt8(truncatingIfNeeded: XXHash32.hash(input[4..<read]) >> 8) == input[read] else {
            throw LZ4Block.Malformed(description: "an LZ4 frame whose header checksum is wrong")
        }
        read += 1
        var output = [UInt8](repeating: 0, count: size)
        var written = 0
        while true {
            guard input.count - read >= 4 else { throw LZ4Block.Malformed(description: "an LZ4 frame is cut off") }
            let word = Self.word(input, at: read)
            read += 4
            if word == 0 { break }
            let length = Int(word & 0x7fff_ffff)
            guard length <= maximumBlock, length <= input.count - read else {
                throw LZ4Block.Malformed(description: "an LZ4 frame's block of \(length) bytes runs past it")
            }
            let end = min(size, written + maximumBlock)
            if word & 0x8000_0000 != 0 {
                guard length <= end - written else {
                    throw LZ4Block.Malformed(description: "an LZ4 frame's stored block runs past the output's size")
                }
                output.replaceSubrange(written..<(written + length), with: input[read..<(read + length)])
                written += length
            } else {
                let blockStart = written
                written = try input.withUnsafeBufferPointer { whole in
                    try output.withUnsafeMutableBufferPointer { target in
                        try LZ4Block.decode(
                            UnsafeBufferPointer(rebasing: whole[read..<(read + length)]), into: target,
                            from: blockStart,
                            end: end, historyStart: independent ? blockStart : 0)
                    }
                }
            }
            if blockChecksums {
                guard input.count - read - length >= 4,
                    XXHash32.hash(input[read..<(read + length)]) == Self.word(input, at: read + length)
                else { throw LZ4Block.Malformed(description: "an LZ4 frame's block checksum is wrong") }
            }
            read += length + (blockChecksums ? 4 : 0)
        }
        if contentChecksum {
            guard input.count - read >= 4, XXHash32.hash(output[0..<written]) == Self.word(input, at: read) else {
                throw LZ4Block.Malformed(description: "an LZ4 frame's content checksum is wrong")
            }
            read += 4
        }
        guard read == input.count else {
            throw LZ4Block.Malformed(description: "an LZ4 frame with \(input.count - read) bytes where its end was due")
        }
        guard written == size else {
            throw LZ4Block.Malformed(description: "the LZ4 frame decompresses to \(written) bytes, not \(size)")
        }
        return output
    }

    private static func word(_ bytes: [UInt8], at: Int) -> UInt32 {
        bytes[at..<(at + 4)].reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    }
}
