import ModelDepotXet
import Testing

/// A reconstruction is a stranger's word: every way it can lie about a file of 100 bytes is refused before a byte
/// is fetched; an honest one becomes terms at the right offsets, sharing a fetch where they can.
@Suite struct XetDownloadPlanTests {
    static let xorb = String(repeating: "ab", count: 32)

    static func answer(
        terms: String =
            #"[{"hash": "X", "unpacked_length": 60, "range": {"start": 0, "end": 2}}, {"hash": "X", "unpacked_length": 40, "range": {"start": 2, "end": 3}}]"#,
        fetch: String =
            #"{"range": {"start": 0, "end": 3}, "url": "https://cas.example/x?sig=1", "url_range": {"start": 0, "end": 123}}"#,
        offset: Int = 0
    ) -> [UInt8] {
        let text = #"{"offset_into_first_range": \#(offset), "terms": \#(terms), "fetch_info": {"X": [\#(fetch)]}}"#
        return Array(text.replacingOccurrences(of: "\"X\"", with: "\"\(xorb)\"").utf8)
    }

    @Test func anHonestAnswerBecomesTermsAtTheirOffsets() throws {
        let plan = try XetDownloadPlan(json: Self.answer(), size: 100)
        #expect(plan.terms.map(\.fileOffset) == [0, 60])
        #expect(plan.terms.map(\.fetch) == [0, 0], "both terms use the one fetch")
        #expect(plan.fetches.first?.bytes == 0...123)
    }

    @Test(
        arguments: [
            ("terms adding up to more", answer(), 99),
            ("terms adding up to less", answer(), 101),
            (
                "a range no fetch holds",
                answer(
                    fetch:
                        #"{"range": {"start": 0, "end": 2}, "url": "https://cas.example/x", "url_range": {"start": 0, "end": 9}}"#
                ), 100
            ),
            (
                "a file URL",
                answer(
                    fetch:
                        #"{"range": {"start": 0, "end": 3}, "url": "file:///etc/passwd", "url_range": {"start": 0, "end": 9}}"#
                ), 100
            ),
            (
                "a fetch of 100 MiB",
                answer(
                    fetch:
                        #"{"range": {"start": 0, "end": 3}, "url": "https://cas.example/x", "url_range": {"start": 0, "end": 104857600}}"#
                ), 100
            ),
            (
                "a reversed byte range",
                answer(
                    fetch:
                        #"{"range": {"start": 0, "end": 3}, "url": "https://cas.example/x", "url_range": {"start": 9, "end": 1}}"#
                ), 100
            ),
            ("a start inside the first term", answer(offset: 5), 100),
            (
                "a term of zero bytes",
                answer(terms: #"[{"hash": "X", "unpacked_length": 0, "range": {"start": 0, "end": 1}}]"#), 0
            ),
            (
                "more bytes than its chunks can hold",
                answer(terms: #"[{"hash": "X", "unpacked_length": 300000, "range": {"start": 0, "end": 2}}]"#), 300_000
            ),
            (
                "a xorb hash that is not one",
                Array(#"{"terms": [{"hash": "../x", "unpacked_length": 100, "range": {"start": 0, "end": 1}}]}"#.utf8),
                100
            ),
            ("not JSON", Array("<html>".utf8), 100),
        ] as [(String, [UInt8], Int64)])
    func liesAreRefused(_ label: String, _ json: [UInt8], _ size: Int64) {
        #expect(throws: XetDownloadPlan.Refused.self, "\(label)") { try XetDownloadPlan(json: json, size: size) }
    }

    /// Runs of one xorb that overlap or touch are served as one fetch: no two fetches of a xorb start at the same
    /// chunk (hf_xet keys what it downloads by xorb and first chunk).
    @Test func aCASMergesTheFetchesOfAXorb() throws {
        func piece(_ first: Int, _ count: Int) -> XetReconstruction.Piece {
            let lengths = [Int](repeating: 100, count: count)
            return .init(
                xorb: Self.xorb, firstChunk: first, lengths: lengths, storedStart: first * 108,
                storedLengths: lengths.map { $0 + 8 })
        }
        let plan = try #require(
            XetReconstruction.plan([piece(0, 3), piece(0, 5), piece(5, 1), piece(9, 2)], size: 1100, range: nil))
        #expect(plan.terms.map(\.chunks) == [0..<3, 0..<5, 5..<6, 9..<11])
        #expect(plan.fetches.map(\.chunks) == [0..<6, 9..<11])
        #expect(plan.fetches.map(\.bytes) == [0...647, 972...1187])
    }
}
