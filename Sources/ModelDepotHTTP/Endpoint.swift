import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// A request whose method the path does not take: answered 405 with `Allow` by each server's error middleware, in
/// its own format.
public struct MethodNotAllowed: Error, Sendable {
    public let method: HTTPRequest.Method
    public let allowed: [HTTPRequest.Method]

    /// The `Allow` header's value (`GET, HEAD`).
    public var allowHeader: String { allowed.map(\.rawValue).joined(separator: ", ") }
}

/// A request body over its route's limit: answered 413, and the connection closed rather than left with the rest
/// of the body arriving.
public struct BodyTooLarge: Error, Sendable {
    public let limit: Int
}

extension RouterMethods {
    /// Registers `handler` at `path` for each of `methods`.
    @discardableResult
    public func endpoint(
        _ path: RouterPath, _ methods: [HTTPRequest.Method],
        use handler: @escaping @Sendable (Request, Context) async throws -> Response
    ) -> Self {
        for method in methods { on(path, method: method, use: handler) }
        return self
    }

    /// Registers a handler that takes the request's body, collected up to `bodyLimit` bytes (a property of the
    /// route: a JSON change is small, a recording to transcribe is not); a longer body is refused with
    /// ``BodyTooLarge`` before the handler runs.
    @discardableResult
    public func endpoint(
        _ path: RouterPath, _ methods: [HTTPRequest.Method], bodyLimit: Int,
        use handler: @escaping @Sendable (Request, Context, ByteBuffer) async throws -> Response
    ) -> Self {
        endpoint(path, methods) { request, context in
            var request = request
            let body: ByteBuffer
            do {
                body = try await request.collectBody(upTo: bodyLimit)
            } catch is NIOTooManyBytesError {
                throw BodyTooLarge(limit: bodyLimit)
            }
            return try await handler(request, context, body)
        }
    }
}

extension Parameters {
    /// A path segment the router captured, percent-decoded (the router hands segments over as sent, so `%2F`
    /// inside one, as in `refs%2Fpr%2F1`, stays inside it).
    public func decoded(_ name: String) -> String? {
        get(name).map(Self.decode)
    }

    /// What a `**` route caught, each segment percent-decoded, joined with `/`.
    public func decodedCatchAll() -> String {
        // The usual path has nothing to decode and no empty component: it is its own answer, without splitting.
        if let raw = self[Self.recursiveCaptureKey], Self.isPlainPath(raw.utf8) { return String(raw) }
        return getCatchAll().map { Self.decode(String($0)) }.joined(separator: "/")
    }

    /// Whether `path` is non-empty segments joined by single slashes, none holding `%`.
    package static func isPlainPath(_ path: Substring.UTF8View) -> Bool {
        var previous = UInt8(ascii: "/")
        for byte in path {
            if byte == UInt8(ascii: "%") || (byte == UInt8(ascii: "/") && previous == byte) { return false }
            previous = byte
        }
        return previous != UInt8(ascii: "/")
    }

    static func decode(_ segment: String) -> String {
        // Most segments have nothing to decode, and Foundation's decoding is not free.
        guard segment.utf8.contains(UInt8(ascii: "%")) else { return segment }
        return segment.removingPercentEncoding ?? segment
    }
}
