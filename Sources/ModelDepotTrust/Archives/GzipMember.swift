import ModelDepotCore

/// One gzip member (RFC 1952), as `tar+gzip` layers hold them: its header read and checked, its DEFLATE stream
/// decoded with ``Inflate`` up to a limit, its trailer's CRC-32 and length compared with what came out.
package enum GzipMember {
    /// Why the bytes are not a gzip member this reads.
    package struct Failure: Error, Equatable {
        package var reason: String
    }

    /// The bytes `input` expands to, at most `limit` of them.
    ///
    /// - Throws: ``Failure`` for a header that is not gzip's, a stream that breaks, more than `limit` bytes out, or
    ///   a trailer whose CRC-32 or length is not the output's.
    package static func decompress(_ input: [UInt8], limit: Int) throws(Failure) -> [UInt8] {
        guard input.count >= 18, input[0] == 0x1F, input[1] == 0x8B else { throw Failure(reason: "it is not gzip") }
        guard input[2] == 8 else { throw Failure(reason: "it uses compression method \(input[2]), not DEFLATE") }
        let flags = input[3]
        guard flags & 0xE0 == 0 else { throw Failure(reason: "its header sets reserved flags") }
        var position = 10
        if flags & 0x04 != 0 {  // FEXTRA
            guard position + 2 <= input.count else { throw Failure(reason: "its header is cut short") }
            position += 2 + (Int(input[position]) | Int(input[position + 1]) << 8)
        }
        for flag: UInt8 in [0x08, 0x10] where flags & flag != 0 {  // FNAME, FCOMMENT: zero-terminated
            guard let end = input[min(position, input.count)...].firstIndex(of: 0) else {
                throw Failure(reason: "its header is cut short")
            }
            position = end + 1
        }
        if flags & 0x02 != 0 { position += 2 }  // FHCRC
        guard position + 8 <= input.count else { throw Failure(reason: "it is cut short") }
        let output: [UInt8]
        do {
            output = try Inflate.decompress(Array(input[position..<(input.count - 8)]), limit: limit + 1)
        } catch {
            throw Failure(reason: "its stream is damaged (\(error))")
        }
        guard output.count <= limit else { throw Failure(reason: "it expands past \(limit) bytes") }
        let trailer = input.suffix(8).map(UInt32.init)
        let crc = trailer[0] | trailer[1] << 8 | trailer[2] << 16 | trailer[3] << 24
        let length = trailer[4] | trailer[5] << 8 | trailer[6] << 16 | trailer[7] << 24
        guard length == UInt32(truncatingIfNeeded: output.count), crc == CRC32.checksum(output) else {
            throw Failure(reason: "its CRC-32 or length does not match what it expands to")
        }
        return output
    }
}

/// CRC-32 (IEEE 802.3, reflected, as gzip and ZIP use it).
package enum CRC32 {
    static let table: [UInt32] = (0..<256).map { index in
        var value = UInt32(index)
        for _ in 0..<8 { value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
        return value
    }

    package static func checksum(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return crc ^ 0xFFFF_FFFF
    }
}
