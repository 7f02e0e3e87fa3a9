import HummingbirdCore
import HummingbirdHTTP2
import Logging
import NIOCore
import NIOHTTP2
import NIOSSL

/// Hummingbird's HTTP/1 and HTTP/2 channels behind TLS, the protocol chosen by ALPN, with the server's current
/// certificate (``ServerTLS``) taken per connection so a reload reaches new connections. (Hummingbird's own
/// `HTTP2UpgradeChannel` builds its context once.) Nothing here sends a `FileRegion`: NIOSSL's handler takes only
/// `ByteBuffer` writes, so files go through memory on these connections, never by `sendfile`.
public struct TLSServingChannel: ServerChildChannel {
    public struct Value: ServerChildChannelValue {
        let negotiated: EventLoopFuture<NIONegotiatedHTTPVersion<HTTP1Channel.Value, HTTP2Channel.Value>>
        public let channel: any Channel
    }

    let http1: HTTP1Channel
    let http2: HTTP2Channel
    let tls: ServerTLS

    public func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls.context))
        }.flatMap {
            channel.configureHTTP2AsyncSecureUpgrade { channel in
                http1.setup(channel: channel, logger: logger)
            } http2ConnectionInitializer: { channel in
                http2.setup(channel: channel, logger: logger)
            }
        }.map { Value(negotiated: $0, channel: channel) }
    }

    public func handle(value: Value, logger: Logger) async {
        do {
            switch try await value.negotiated.get() {
            case .http1_1(let connection): await http1.handle(value: connection, logger: logger)
            case .http2(let connection): await http2.handle(value: connection, logger: logger)
            }
        } catch {
            // A handshake that failed (plain http to the https port, an unknown ALPN token): the connection is closed.
            logger.debug("TLS connection not set up", metadata: ["error": "\(error)"])
        }
    }
}

extension HTTPServerBuilder {
    /// HTTP/2 or HTTP/1.1 by ALPN over TLS, with the certificate `tls` holds when each connection is made; idle
    /// connections of either protocol close after `idleTimeout`.
    public static func tls(_ tls: ServerTLS, idleTimeout: Duration?) -> HTTPServerBuilder {
        HTTPServerBuilder { responder in
            let http1 = HTTP1Channel.Configuration(idleTimeout: idleTimeout.map { TimeAmount($0) })
            return TLSServingChannel(
                http1: HTTP1Channel(responder: responder, configuration: http1),
                http2: HTTP2Channel(
                    responder: responder,
                    configuration: .init(
                        idleTimeout: idleTimeout,
                        streamConfiguration: .init(additionalChannelHandlers: [ConnectionFieldsRemover()]))),
                tls: tls)
        }
    }
}
