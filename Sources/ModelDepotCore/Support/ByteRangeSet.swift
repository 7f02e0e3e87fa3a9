/// A set of byte offsets stored as sorted, non-overlapping, non-adjacent half-open ranges.
///
/// The engine records which parts of a file are on disk with it; the resume sidecar persists it.
/// Inserting is O(n) in the number of ranges, which stays around twice the connection count.
package struct ByteRangeSet: Sendable, Equatable, Codable {
    package private(set) var ranges: [Range<Int64>] = []

    package init() {}

    package init(_ ranges: [Range<Int64>]) {
        for range in ranges { insert(range) }
    }

    /// The number of bytes covered.
    package var count: Int64 { ranges.reduce(0) { $0 + ($1.upperBound - $1.lowerBound) } }

    package var isEmpty: Bool { ranges.isEmpty }

    /// Where the run of bytes that starts at offset 0 ends (0 when byte 0 is missing).
    package var prefixEnd: Int64 {
        guard let first = ranges.first, first.lowerBound == 0 else { return 0 }
        return first.upperBound
    }

    /// Adds `range`, merging it with the ranges it overlaps or touches. In place: the common case — a write
    /// that extends a range — allocates nothing.
    package mutating func insert(_ range: Range<Int64>) {
        guard !range.isEmpty else { return }
        // The first range that ends at or after the new one's start: the first that can merge with it.
        var low = 0
        var high = ranges.count
        while low < high {
            let middle = (low + high) / 2
            if ranges[middle].upperBound < range.lowerBound { low = middle + 1 } else { high = middle }
        }
        var merged = range
        var end = low
        while end < ranges.count && ranges[end].lowerBound <= merged.upperBound {
            merged = min(ranges[end].lowerBound, merged.lowerBound)..<max(ranges[end].upperBound, merged.upperBound)
            end += 1
        }
        ranges.replaceSubrange(low..<end, with: CollectionOfOne(merged))
    }

    package func contains(_ range: Range<Int64>) -> Bool {
        range.isEmpty || ranges.contains { $0.lowerBound <= range.lowerBound && range.upperBound <= $0.upperBound }
    }

    /// The parts of `0..<total` not in the set, in ascending order.
    package func gaps(upTo total: Int64) -> [Range<Int64>] {
        var result: [Range<Int64>] = []
        var cursor: Int64 = 0
        for range in ranges where range.lowerBound < total {
            if range.lowerBound > cursor { result.append(cursor..<range.lowerBound) }
            cursor = max(cursor, range.upperBound)
        }
        if cursor < total { result.append(cursor..<total) }
        return result
    }

    package init(from decoder: any Decoder) throws {
        let pairs = try decoder.singleValueContainer().decode([[Int64]].self)
        for pair in pairs {
            guard pair.count == 2, pair[0] >= 0, pair[0] <= pair[1] else {
                throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "bad range"))
            }
            insert(pair[0]..<pair[1])
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(ranges.map { [$0.lowerBound, $0.upperBound] })
    }
}
