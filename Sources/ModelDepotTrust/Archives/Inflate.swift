import ModelDepotCore

/// A raw DEFLATE (RFC 1951) decoder, for `np.savez_compressed` entries and compressed ZIP members: the package
/// has no zlib on Linux, and only a bounded prefix of an entry is ever needed (a `.npy` header, a pickle up to a cap).
package enum Inflate {
    /// Why the stream cannot be decoded.
    package enum Failure: Error, Equatable {
        /// The input ended before the output limit or the final block.
        case truncated
        /// The stream breaks RFC 1951 (the text says how).
        case invalid(String)
    }

    /// Decodes `input` until the final block ends or `limit` bytes are out; returns at most `limit` bytes.
    ///
    /// - Throws: `truncated` when the input ends first, `invalid` for a malformed stream.
    package static func decompress(_ input: [UInt8], limit: Int = .max) throws(Failure) -> [UInt8] {
        var decoder = Decoder(input: input, limit: limit)
        try decoder.run()
        return decoder.output
    }

    /// A canonical Huffman code: symbols ordered by code length, then value (RFC 1951 §3.2.2).
    struct Huffman {
        var counts = [Int](repeating: 0, count: 16)
        var symbols: [Int] = []

        init(lengths: [Int]) throws(Failure) {
            for length in lengths { counts[length] += 1 }
            counts[0] = 0
            var left = 1
            for length in 1..<16 {
                left = left * 2 - counts[length]
                guard left >= 0 else { throw .invalid("an over-subscribed Huffman code") }
            }
            var offsets = [Int](repeating: 0, count: 16)
            for length in 1..<15 { offsets[length + 1] = offsets[length] + counts[length] }
            symbols = [Int](repeating: 0, count: lengths.count)
            for (symbol, length) in lengths.enumerated() where length != 0 {
                symbols[offsets[length]] = symbol
                offsets[length] += 1
            }
        }
    }

    struct Decoder {
        let input: [UInt8]
        let limit: Int
        var output: [UInt8] = []
        var position = 0
        var bitBuffer = 0
        var bitCount = 0

        init(input: [UInt8], limit: Int) {
            self.input = input
            self.limit = limit
        }

        static let lengthBase = [
            3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195,
            227,
            258,
        ]
        static let lengthExtra = [
            0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0,
        ]
        static let distanceBase = [
            1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097,
            6145, 8193, 12289, 16385, 24577,
        ]
        static let distanceExtra = [
            0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13,
        ]
        /// The order code length code lengths are sent in (§3.2.7).
        static let codeLengthOrder = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15]

        var isFull: Bool { output.count >= limit }

        mutating func bits(_ count: Int) throws(Failure) -> Int {
            while bitCount < count {
                guard position < input.count else { throw .truncated }
                bitBuffer |= Int(input[position]) << bitCount
                position += 1
                bitCount += 8
            }
            let value = bitBuffer & ((1 << count) - 1)
            bitBuffer >>= count
            bitCount -= count
            return value
        }

        /// Reads one symbol bit by bit (codes are sent most significant bit first).
        mutating func decode(_ code: Huffman) throws(Failure) -> Int {
            var value = 0
            var first = 0
            var index = 0
            for length in 1..<16 {
                value |= try bits(1)
                let count = code.counts[length]
                if value - first < count { return code.symbols[index + value - first] }
                index += count
                first = (first + count) << 1
                value <<= 1
            }
            throw .invalid("a code that is not in its Huffman table")
        }

        mutating func run() throws(Failure) {
            var final = false
            while !final && !isFull {
                final = try bits(1) == 1
                switch try bits(2) {
                case 0: try stored()
                case 1: try codes(Self.fixedLiterals, Self.fixedDistances)
                case 2:
                    let (literals, distances) = try dynamicTables()
                    try codes(literals, distances)
                default: throw .invalid("a block of reserved type 3")
                }
            }
            if output.count > limit { output.removeLast(output.count - limit) }
        }

        mutating func stored() throws(Failure) {
            bitBuffer = 0
            bitCount = 0
            guard position + 4 <= input.count else { throw .truncated }
            let length = Int(input[position]) | Int(input[position + 1]) << 8
            let complement = Int(input[position + 2]) | Int(input[position + 3]) << 8
            guard length == ~complement & 0xFFFF else { throw .invalid("a stored block whose length does not check") }
            position += 4
            let available = min(length, input.count - position, limit - output.count)
            output += input[position..<position + available]
            position += available
            guard available == length || isFull else { throw .truncated }
        }

        static let fixedLiterals: Huffman = {
            let lengths =
                [Int](repeating: 8, count: 144) + [Int](repeating: 9, count: 112)
                + [Int](repeating: 7, count: 24) + [Int](repeating: 8, count: 8)
            return try! Huffman(lengths: lengths)
        }()
        static let fixedDistances: Huffman = try! Huffman(lengths: [Int](repeating: 5, count: 30))

        mutating func dynamicTables() throws(Failure) -> (Huffman, Huffman) {
            let literalCount = try bits(5) + 257
            let distanceCount = try bits(5) + 1
            let codeLengthCount = try bits(4) + 4
            guard literalCount <= 286, distanceCount <= 30 else { throw .invalid("too many codes in a block") }
            var codeLengths = [Int](repeating: 0, count: 19)
            for index in 0..<codeLengthCount { codeLengths[Self.codeLengthOrder[index]] = try bits(3) }
            let codeLengthCode = try Huffman(lengths: codeLengths)
            var lengths: [Int] = []
            while lengths.count < literalCount + distanceCount {
                let symbol = try decode(codeLengthCode)
                switch symbol {
                case 0..<16: lengths.append(symbol)
                case 16:
                    guard let previous = lengths.last else { throw .invalid("a repeat with nothing before it") }
                    lengths += [Int](repeating: previous, count: 3 + (try bits(2)))
                case 17: lengths += [Int](repeating: 0, count: 3 + (try bits(3)))
                default: lengths += [Int](repeating: 0, count: 11 + (try bits(7)))
                }
            }
            guard lengths.count == literalCount + distanceCount else { throw .invalid("code lengths that overrun") }
            guard lengths[256] != 0 else { throw .invalid("no end-of-block code") }
            return (
                try Huffman(lengths: Array(lengths[..<literalCount])),
                try Huffman(lengths: Array(lengths[literalCount...]))
            )
        }

        mutating func codes(_ literals: Huffman, _ distances: Huffman) throws(Failure) {
            while !isFull {
                let symbol = try decode(literals)
                if symbol < 256 {
                    output.append(UInt8(symbol))
                    continue
                }
                if symbol == 256 { return }
                let index = symbol - 257
                guard index < 29 else { throw .invalid("a length code out of range") }
                let length = Self.lengthBase[index] + (try bits(Self.lengthExtra[index]))
                let distanceSymbol = try decode(distances)
                guard distanceSymbol < 30 else { throw .invalid("a distance code out of range") }
                let distance = Self.distanceBase[distanceSymbol] + (try bits(Self.distanceExtra[distanceSymbol]))
                guard distance <= output.count else { throw .invalid("a distance before the start of the output") }
                let start = output.count - distance
                for step in 0..<length { output.append(output[start + step]) }
            }
        }
    }
}
