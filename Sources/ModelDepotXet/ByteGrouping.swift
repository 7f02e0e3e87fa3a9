/// The byte-grouping transform of Xet's `ByteGrouping4LZ4` scheme (Xet documentation, "Xorb format"; xet-core's
/// `bg4`): the bytes at positions 0, 4, 8… first, then 1, 5, 9…, then 2, 6…, then 3, 7…, so the like bytes of
/// 4-byte floats sit together and compress. With a length that is not a multiple of 4 the first groups are one
/// longer.
public enum ByteGrouping {
    /// Groups `bytes` (what a writer does before compressing).
    public static func group(_ bytes: [UInt8]) -> [UInt8] {
        var grouped = [UInt8]()
        grouped.reserveCapacity(bytes.count)
        for lane in 0..<4 {
            var index = lane
            while index < bytes.count {
                grouped.append(bytes[index])
                index += 4
            }
        }
        return grouped
    }

    /// Undoes ``group(_:)`` (what a reader does after decompressing).
    public static func ungroup(_ grouped: [UInt8]) -> [UInt8] {
        let count = grouped.count
        var bytes = [UInt8](repeating: 0, count: count)
        var start = 0
        for lane in 0..<4 {
            let laneCount = count / 4 + (lane < count % 4 ? 1 : 0)
            for index in 0..<laneCount { bytes[lane + 4 * index] = grouped[start + index] }
            start += laneCount
        }
        return bytes
    }
}
