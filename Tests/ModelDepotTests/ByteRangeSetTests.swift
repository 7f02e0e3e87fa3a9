import Foundation
import Testing

@testable import ModelDepot
@testable import ModelDepotCache
@testable import ModelDepotCore
@testable import ModelDepotHub
@testable import ModelDepotTransfer

@Suite struct ByteRangeSetTests {
    @Test func insertMergesOverlappingAndAdjacentRanges() {
        var set = ByteRangeSet()
        set.insert(10..<20)
        set.insert(30..<40)
        set.insert(20..<25)
        #expect(set.ranges == [10..<25, 30..<40])
        set.insert(5..<35)
        #expect(set.ranges == [5..<40])
        set.insert(50..<50)
        #expect(set.ranges == [5..<40])
        #expect(set.count == 35)
    }

    @Test func gapsAndPrefix() {
        let set = ByteRangeSet([0..<10, 20..<30])
        #expect(set.prefixEnd == 10)
        #expect(set.gaps(upTo: 40) == [10..<20, 30..<40])
        #expect(ByteRangeSet([5..<10]).prefixEnd == 0)
        #expect(set.contains(2..<8))
        #expect(!set.contains(8..<22))
    }

    /// Random insertions agree with a bitmap model.
    @Test func matchesABitmapModel() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            var set = ByteRangeSet()
            var model = [Bool](repeating: false, count: 100)
            for _ in 0..<8 {
                let start = Int.random(in: 0..<100, using: &generator)
                let end = Int.random(in: start...100, using: &generator)
                set.insert(Int64(start)..<Int64(end))
                for index in start..<end { model[index] = true }
            }
            #expect(set.count == Int64(model.filter { $0 }.count))
            for (lhs, rhs) in zip(set.ranges, set.ranges.dropFirst()) { #expect(lhs.upperBound < rhs.lowerBound) }
            let gapBytes = set.gaps(upTo: 100).reduce(0) { $0 + $1.count }
            #expect(Int64(gapBytes) + set.count == 100)
        }
    }

    @Test func codableRoundTripAndRejectsBadPairs() throws {
        let set = ByteRangeSet([0..<10, 20..<30])
        let data = try JSONEncoder().encode(set)
        #expect(String(decoding: data, as: UTF8.self) == "[[0,10],[20,30]]")
        #expect(try JSONDecoder().decode(ByteRangeSet.self, from: data) == set)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(ByteRangeSet.self, from: Data("[[5,1]]".utf8)) }
    }
}
