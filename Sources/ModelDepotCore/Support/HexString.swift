extension Sequence where Element == UInt8 {
    /// Lowercase hex, for digests (shared by the targets, not public API).
    package var hexString: String {
        let digits: [UInt8] = Array("0123456789abcdef".utf8)
        var result: [UInt8] = []
        for byte in self {
            result.append(digits[Int(byte >> 4)])
            result.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: result, as: UTF8.self)
    }
}
