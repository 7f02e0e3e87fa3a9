/// LZ4's block format (lz4's "LZ4 Block Format Description"): sequences of a token, literals and a back
/// reference. Xet's chunks hold LZ4 frames (``LZ4Frame``) of such blocks. Every length and offset is checked against the input and the expected output: a hostile
/// block is refused, never read or written out of bounds.
public enum LZ4Block {
    public struct Malformed: Error, Sendable, Equatable, CustomStringConvertible {
        public let description: String
    }

    /// The bytes `block` decompresses to, which must be exactly `size` bytes.
    public static func decompress(_ block: some Collection<UInt8>, size: Int) throws -> [UInt8] {
        guard size >= 0 else { throw Malformed(description: "a size of \(size) bytes") }
        let input = Array(block)
        var output = [UInt8](repeating: 0, count: size)
        let written = try input.withUnsafeBufferPointer { source in
            try output.withUnsafeMutableBufferPointer { target in
                try decode(source, into: target, from: 0, end: size, historyStart: 0)
            }
        }
        guard written == size else {
            throw Malformed(description: "the block decompresses to \(written) bytes, not \(size)")
        }
        return output
    }

    /// Decodes `source`, one block, into `target` from `start`, never writing at or past `end`; a match may reach
    /// back to `historyStart` (a block of a frame whose blocks are linked sees the blocks before it). Returns where
    /// the output ends.
    static func decode(
        _ source: UnsafeBufferPointer<UInt8>, into target: UnsafeMutableBufferPointer<UInt8>, from start: Int,
        end: Int, historyStart: Int
    ) throws -> Int {
        precondition(0 <= historyStart && historyStart <= start && start <= end && end <= target.count)
        var read = 0
        var written = start
        func length(_ first: Int) throws -> Int {
            var total = first
            guard first == 15 else { return total }
            while true {
                guard read < source.count else { throw Malformed(description: "a length runs past the block") }
                let byte = Int(source[read])
                read += 1
                total += byte
                guard total <= end - start else { throw Malformed(description: "a length past the output's size") }
                if byte != 255 { return total }
            }
        }
        while read < source.count {
            let token = Int(source[read])
            read += 1
            let literals = try length(token >> 4)
            guard literals <= source.count - read, literals <= end - written else {
                throw Malformed(description: "literals run past the block or the output")
            }
            for index in 0..<literals { target[written + index] = source[read + index] }
            read += literals
            written += literals
            // The last sequence has literals only.
            if read == source.count { break }
            guard source.count - read >= 2 else { throw Malformed(description: "a match offset is cut off") }
            let offset = Int(source[read]) | Int(source[read + 1]) << 8
            read += 2
            guard offset > 0, offset <= written - historyStart else {
                throw Malformed(description: "a match refers to \(offset) bytes back, before the output's start")
            }
            let match = try length(token & 15) + 4
            guard match <= end - written else { throw Malformed(description: "a match past the output's size") }
            // Byte by byte: a match may overlap what it writes (offset < length repeats a pattern).
            for index in 0..<match { target[written + index] = target[written + index - offset] }
            written += match
        }
        return written
    }
}
