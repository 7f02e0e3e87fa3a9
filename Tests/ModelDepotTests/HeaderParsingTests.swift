import Foundation
import Testing

@testable import ModelDepot
@testable import ModelDepotCache
@testable import ModelDepotCore
@testable import ModelDepotHub
@testable import ModelDepotTransfer

@Suite struct HeaderParsingTests {
    @Test func contentRange() {
        #expect(ContentRange(header: "bytes 0-99/1000") == ContentRange(range: 0..<100, total: 1000))
        #expect(ContentRange(header: "bytes */1000") == ContentRange(range: nil, total: 1000))
        #expect(ContentRange(header: "bytes 5-9/*") == ContentRange(range: 5..<10, total: nil))
        #expect(ContentRange(header: "bytes 9-5/100") == nil)
        #expect(ContentRange(header: "bytes 0-100/100") == nil, "the last byte must be inside the total")
        #expect(ContentRange(header: "items 0-1/2") == nil)
        #expect(ContentRange(header: "bytes */*") == nil)
    }

    @Test func retryAfter() {
        #expect(RetryAfter.parse("7") == .seconds(7))
        #expect(RetryAfter.parse(" 0 ") == .seconds(0))
        #expect(RetryAfter.parse("-3") == nil)
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        let later = "Tue, 14 Nov 2023 22:13:27 GMT"  // now + 7 s
        #expect(RetryAfter.parse(later, now: now) == .seconds(7))
        #expect(RetryAfter.parse("soon") == nil)
    }

    @Test func validatorsPreferStrongETagsForIfRange() {
        #expect(ResourceValidators(etag: "\"abc\"", lastModified: "x").ifRangeValue == "\"abc\"")
        #expect(ResourceValidators(etag: "W/\"abc\"", lastModified: "x").ifRangeValue == "x")
        #expect(ResourceValidators(etag: nil, lastModified: nil).ifRangeValue == nil)
        let saved = ResourceValidators(etag: "\"a\"", lastModified: nil)
        #expect(saved.conflicts(with: ResourceValidators(etag: "\"b\"", lastModified: nil)))
        #expect(!saved.conflicts(with: ResourceValidators(etag: nil, lastModified: "y")))
    }
}
