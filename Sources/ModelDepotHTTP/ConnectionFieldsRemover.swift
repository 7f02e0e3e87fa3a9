import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Takes the connection-specific fields out of responses on HTTP/2 streams, where they are malformed (RFC 9113
/// §8.2.2) and NIOHTTP2 refuses to send them, ending the whole connection. Routes written for HTTP/1 set
/// `Connection: close` to end a connection whose request body they will not read; on HTTP/2 the stream alone ends.
final class ConnectionFieldsRemover: ChannelOutboundHandler, RemovableChannelHandler, Sendable {
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    static let names: [HTTPField.Name] = [
        .connection, .transferEncoding, .upgrade, HTTPField.Name("Keep-Alive")!, HTTPField.Name("Proxy-Connection")!,
    ]

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .head(var head) = unwrapOutboundIn(data) else {
            context.write(data, promise: promise)
            return
        }
        for name in Self.names { head.headerFields[name] = nil }
        context.write(wrapOutboundOut(.head(head)), promise: promise)
    }
}
