import Foundation
import Testing

@testable import ModelDepot
@testable import ModelDepotCache
@testable import ModelDepotCore
@testable import ModelDepotHub
@testable import ModelDepotTransfer

/// The HTTP facts every client shares, in one place.
@Suite struct HTTPExchangeTests {
    static func response(_ status: Int, location: String? = nil) -> TransportResponse {
        TransportResponse(
            status: status, headers: location.map { [(name: "Location", value: $0)] } ?? [], body: .empty)
    }

    @Test func statusesMapToOneSetOfCodes() {
        let expected: [Int: ModelDepotError.Code] = [
            400: .httpStatus, 401: .unauthorized, 403: .unauthorized, 404: .notFound, 408: .network, 410: .notFound,
            416: .httpStatus, 429: .rateLimited, 500: .serverError, 501: .httpStatus, 502: .serverError,
            503: .serverError, 505: .httpStatus, 599: .serverError,
        ]
        for (status, code) in expected { #expect(HTTPExchange.code(for: status) == code, "\(status)") }
        #expect(ModelDepotError.Code.transient == [.network, .stalled, .serverError, .rateLimited])
    }

    @Test func redirectTargetsAreResolvedAndOnlyHTTPIsFollowed() throws {
        let url = URL(string: "https://hub.example/acme/tiny/resolve/main/x.bin")!
        #expect(try HTTPExchange.redirectTarget(of: Self.response(200), from: url) == nil)
        #expect(try HTTPExchange.redirectTarget(of: Self.response(304), from: url) == nil)
        let relative = try HTTPExchange.redirectTarget(of: Self.response(302, location: "/other/x.bin"), from: url)
        #expect(relative?.absoluteString == "https://hub.example/other/x.bin")
        let cdn = try HTTPExchange.redirectTarget(
            of: Self.response(307, location: "https://cdn.example/a?sig=1"), from: url)
        #expect(cdn?.host == "cdn.example")
        for bad in ["file:///etc/passwd", "ftp://hub.example/x", "javascript:alert(1)"] {
            #expect(throws: ModelDepotError.self, "\(bad)") {
                try HTTPExchange.redirectTarget(of: Self.response(302, location: bad), from: url)
            }
        }
        #expect(throws: ModelDepotError.self) { try HTTPExchange.redirectTarget(of: Self.response(301), from: url) }
    }
}
