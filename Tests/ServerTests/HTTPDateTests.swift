import Foundation
import Testing

@testable import ModelDepotServer

/// The dates every answer carries, written by hand: the same text the formatters gave, and only valid dates read.
@Suite struct HTTPDateTests {
    @Test func httpDatesAreIMFFixdatesBothWays() {
        #expect(HTTPDate.string(Date(timeIntervalSince1970: 784_111_777)) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDate.string(Date(timeIntervalSince1970: 0.9)) == "Thu, 01 Jan 1970 00:00:00 GMT")
        #expect(HTTPDate.parse(" Sun, 06 Nov 1994 08:49:37 GMT ") == Date(timeIntervalSince1970: 784_111_777))
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<500 {
            let date = Date(timeIntervalSince1970: Double(Int64.random(in: 0..<4_102_444_800, using: &generator)))
            #expect(HTTPDate.parse(HTTPDate.string(date)) == date)
        }
        for text in [
            "", "Sun, 06 Nov 1994 08:49:37", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994",
            "Sun, 6 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 24:00:00 GMT", "Sun, 06 Foo 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 08:49:3x GMT", "Sun, 32 Nov 1994 08:49:37 GMT",
        ] {
            #expect(HTTPDate.parse(text) == nil, "\(text)")
        }
    }

    @Test func hubTimestampsAreUTCWithMilliseconds() {
        #expect(HubJSON.timestamp(Date(timeIntervalSince1970: 784_111_777.2509)) == "1994-11-06T08:49:37.250Z")
        #expect(HubJSON.timestamp(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00.000Z")
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        for seconds in stride(from: 0.0, to: 4_000_000_000, by: 97_654_321.125) {
            let date = Date(timeIntervalSince1970: seconds)
            #expect(formatter.date(from: HubJSON.timestamp(date)) == date)
        }
    }
}
