import Foundation
import ModelDepotCore

/// The one thing the transfer engine needs from an HTTP stack: send a request, stream the answer.
///
/// The engine follows redirects itself (so it decides which headers cross origins) and asks for raw bytes
/// (`Accept-Encoding: identity`), so an implementation must not follow redirects nor decode bodies.
/// ``AsyncHTTPTransport`` and ``URLSessionTransport`` implement it; ``DefaultTransport`` picks one per platform.
package protocol HTTPTransport: Sendable {
    /// Sends `request` and returns once the response head has arrived; the body streams afterwards.
    /// Dropping the body before its end closes the connection.
    func send(_ request: TransportRequest) async throws -> TransportResponse

    /// The proxy a request to `url` goes through (its description, without credentials); nil when it goes
    /// directly, or when the transport cannot tell (the system decides, as URLSession does).
    func proxy(for url: URL) -> String?
}

extension HTTPTransport {
    package func proxy(for url: URL) -> String? { nil }
}

/// The transport used when none is given: URLSession on Apple platforms (the system's networking, no socket
/// stack of our own in an app), async-http-client elsewhere.
package enum DefaultTransport {
    package static var shared: any HTTPTransport {
        #if canImport(Darwin) || !MODELDEPOT_SERVER_STACK
            URLSessionTransport.shared
        #else
            AsyncHTTPTransport.shared
        #endif
    }

    /// The transport for downloads under `policy`: on Apple platforms a URLSession whose configuration carries it
    /// (`allowsExpensiveNetworkAccess`, `allowsConstrainedNetworkAccess`), one per distinct policy, so the system
    /// enforces it too; elsewhere ``shared`` (the engine enforces the policy from ``NetworkConditions``).
    package static func shared(for policy: NetworkPolicy) -> any HTTPTransport {
        #if canImport(Darwin) || !MODELDEPOT_SERVER_STACK
            URLSessionTransport.shared(for: policy)
        #else
            AsyncHTTPTransport.shared
        #endif
    }

    /// The transport for requests through `network`'s proxies and with its certificate authorities (the command
    /// line's `--proxy`, `--ca-cert`, `--insecure`): async-http-client's, one per distinct settings, wherever it
    /// exists. In apps on Apple's mobile platforms URLSession follows the system's proxy settings and trust store
    /// (Settings › Wi-Fi › Proxy, configuration profiles), which is what a device's owner manages; `network` is
    /// not applied there.
    package static func shared(for network: NetworkSettings) -> any HTTPTransport {
        #if MODELDEPOT_SERVER_STACK
            AsyncHTTPTransport.shared(for: network)
        #else
            URLSessionTransport.shared
        #endif
    }
}

/// One HTTP request as the engine sends it.
package struct TransportRequest: Sendable {
    /// The HTTP method (`GET`, `HEAD`).
    package var method: String
    /// The URL asked for.
    package var url: URL
    /// The request's headers, in order.
    package var headers: [(name: String, value: String)]
    /// The request body (a JSON document for API calls); nil sends none.
    package var body: [UInt8]?
    /// True when the caller itself drops a response that goes silent (the download engine's stall timeout
    /// watches every ranged request), so the transport may leave out its own idle-read timer.
    package var callerDetectsStalls: Bool

    /// A request; `Range` and conditional headers go in `headers`.
    package init(
        method: String = "GET", url: URL, headers: [(name: String, value: String)] = [], body: [UInt8]? = nil,
        callerDetectsStalls: Bool = false
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.callerDetectsStalls = callerDetectsStalls
    }

    /// The first value of the header `name` (case-insensitive).
    package func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }
}

/// One HTTP response: status and headers at once, the body as it streams.
package struct TransportResponse: Sendable {
    /// The HTTP status code.
    package var status: Int
    /// The response's headers, in order.
    package var headers: [(name: String, value: String)]
    /// The body, read once as it arrives.
    package var body: TransportBody

    /// A response; a transport (or a test double) makes these.
    package init(status: Int, headers: [(name: String, value: String)], body: TransportBody) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The first value of header `name`, compared case-insensitively.
    package func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// The rate limit the server announced (`RateLimit` with its `RateLimit-Policy`); nil without one.
    package var rateLimit: RateLimit? {
        RateLimit(rateLimit: header("RateLimit"), policy: header("RateLimit-Policy"))
    }

    /// How long the server asked clients to wait: the rate limit's reset when nothing remains, else
    /// `Retry-After` (seconds or an HTTP date).
    package var retryAfter: Duration? {
        if let rateLimit, rateLimit.remaining == 0 { return rateLimit.reset }
        return header("Retry-After").flatMap { RetryAfter.parse($0) }
    }
}

/// A response body as a stream of chunks, type-erased so transports can produce it from anything.
package struct TransportBody: AsyncSequence, Sendable {
    package typealias Element = BodyChunk

    private let makeNext: @Sendable () -> (@Sendable () async throws -> BodyChunk?)

    /// - Parameter makeNext: returns a fresh `next` function each time the body is iterated.
    package init(makeNext: @escaping @Sendable () -> (@Sendable () async throws -> BodyChunk?)) {
        self.makeNext = makeNext
    }

    /// Wraps any sequence of chunks; `mapError` turns what its iteration throws into what callers should see.
    package init<Base: AsyncSequence & Sendable>(
        _ base: Base, mappingErrors mapError: @escaping @Sendable (any Error) -> any Error = { $0 }
    ) where Base.Element == BodyChunk {
        self.init(base, chunk: { $0 }, mappingErrors: mapError)
    }

    private init<Base: AsyncSequence & Sendable>(
        _ base: Base, chunk: @escaping @Sendable (Base.Element) -> BodyChunk,
        mappingErrors mapError: @escaping @Sendable (any Error) -> any Error
    ) {
        self.makeNext = {
            let box = IteratorBox(base.makeAsyncIterator())
            return {
                do {
                    return try await box.next().map(chunk)
                } catch {
                    throw mapError(error)
                }
            }
        }
    }

    /// A body with no bytes.
    package static let empty = TransportBody(makeNext: { { nil } })

    /// Reads the body's chunks in order.
    package struct AsyncIterator: AsyncIteratorProtocol, Sendable {
        let nextChunk: @Sendable () async throws -> BodyChunk?
        package mutating func next() async throws -> BodyChunk? { try await nextChunk() }
    }

    package func makeAsyncIterator() -> AsyncIterator { AsyncIterator(nextChunk: makeNext()) }

    /// At most the first `limit` bytes of the body (the rest is dropped, which closes the connection): enough of
    /// an error page to quote.
    package func prefix(limit: Int) async throws -> [UInt8] {
        var bytes: [UInt8] = []
        for try await chunk in self {
            chunk.withUnsafeBytes { bytes += $0.prefix(limit - bytes.count) }
            if bytes.count >= limit { break }
        }
        return bytes
    }

    /// The whole body, refused with `protocolViolation` past `limit` bytes (an API answer that large is
    /// not one). Errors of the transport are rethrown as they are.
    package func collect(limit: Int, from url: URL) async throws -> [UInt8] {
        var bytes: [UInt8] = []
        for try await chunk in self {
            chunk.withUnsafeBytes { bytes += $0 }
            guard bytes.count <= limit else {
                throw ModelDepotError(
                    .protocolViolation, "\(url.absoluteString) sent more than \(limit) bytes for an API call.")
            }
        }
        return bytes
    }
}

/// Holds a non-Sendable iterator that is only ever used by one task at a time (the body's consumer).
private final class IteratorBox<Base: AsyncIteratorProtocol>: @unchecked Sendable {
    private var base: Base
    init(_ base: Base) { self.base = base }
    func next() async throws -> Base.Element? { try await base.next() }
}
