/// Something the ``FaultServer`` does to one request instead of answering it properly.
public enum Fault: Sendable {
    /// Answer with this status, headers and a short text body (`503`, `429` with `Retry-After`, `404`, …).
    case status(Int, headers: [(String, String)] = [], body: String = "")
    /// Redirect (302 by default) to `location`, absolute or relative.
    case redirect(to: String, status: Int = 302)
    /// Send this many body bytes, then reset the connection (TCP RST).
    case reset(afterBytes: Int)
    /// Send this many body bytes, then close the connection cleanly though more were announced.
    case truncate(afterBytes: Int)
    /// Send this many body bytes, then send nothing more while keeping the connection open.
    case stall(afterBytes: Int)
    /// Flip the byte at this offset of the response body.
    case corrupt(atBodyOffset: Int)
    /// Answer a range request with 200 and the whole file, as servers without range support do.
    case ignoreRange
    /// Replace the file's content (and so its ETag) before answering this request.
    case replaceContent([UInt8])
    /// Send the body at this rate (bytes per second), in small chunks.
    case throttle(bytesPerSecond: Int)
}

/// Which requests a fault applies to.
public struct RequestMatcher: Sendable {
    let matches: @Sendable (RecordedRequest) -> Bool

    public init(_ matches: @escaping @Sendable (RecordedRequest) -> Bool) { self.matches = matches }

    public static let any = RequestMatcher { _ in true }

    /// Requests whose `Range` starts at `offset`.
    public static func rangeStarting(at offset: Int64) -> RequestMatcher {
        RequestMatcher { $0.rangeStart == offset }
    }

    /// Ranged requests that do not start at 0 (not the engine's first request).
    public static let laterRanges = RequestMatcher { ($0.rangeStart ?? 0) > 0 }
}

/// A request the ``FaultServer`` received, kept for assertions.
public struct RecordedRequest: Sendable {
    public let method: String
    public let path: String
    public let headers: [(String, String)]
    /// The request body (scripted servers record it; the ``FaultServer`` does not).
    public var body: [UInt8] = []

    public func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    /// The first offset of a `Range: bytes=N-…` header.
    public var rangeStart: Int64? {
        guard let range = header("Range"), range.hasPrefix("bytes=") else { return nil }
        return Int64(range.dropFirst(6).prefix { $0 != "-" })
    }
}
