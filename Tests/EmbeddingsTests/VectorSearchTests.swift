import ModelDepotEmbeddings
import Testing

@Suite struct VectorSearchTests {
    @Test func nearestRanksByCosineAndSkipsVectorsThatCannotMatch() {
        let vectors: [[Float]] = [[1, 0], [0, 1], [1, 1], [2, 0], [0, 0], [1, 0, 0], [-1, 0]]
        let matches = nearest(to: [1, 0], in: vectors, count: 4)
        #expect(matches.map(\.index) == [0, 3, 2, 1], "ties keep the earlier vector first")
        #expect(abs(matches[2].similarity - 0.5.squareRoot()) < 1e-12)
        #expect(nearest(to: [1, 0], in: vectors, count: 10).count == 5, "the zero and 3-long vectors never match")
        #expect(nearest(to: [1, 0], in: vectors, count: 0).isEmpty)
        #expect(nearest(to: [1, 0], in: [], count: 3).isEmpty)
    }
}
