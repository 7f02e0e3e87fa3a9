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
    /// A client that has not finished the handshake by then is disconnected: otherwise a socket that never sends a
    /// ClientHello holds a connection slot (and a stop) for ever, before any HTTP idle timeout applies.
    let handshakeTimeout: TimeAmount
    /// An HTTP/2 connection that sends nothing at all for this long is closed. Hummingbird's idle timeout asks an
    /// idle HTTP/2 client to leave (GOAWAY and a PING) and closes on its answer; a silent client never answers.
    /// Long, since a client receiving a big file sends only a WINDOW_UPDATE now and then.
    let silenceTimeout: TimeAmount

    public func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let deadline = channel.eventLoop.scheduleTask(in: handshakeTimeout) {
            logger.debug("TLS handshake not finished in time: connection closed")
            channel.close(promise: nil)
        }
        let stopBeforeHandshake = CloseOnQuiesce()
        return channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(stopBeforeHandshake)
            try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls.context))
        }.flatMap {
            channel.configureHTTP2AsyncSecureUpgrade { channel in
                http1.setup(channel: channel, logger: logger)
            } http2ConnectionInitializer: { channel in
                http2.setup(channel: channel, logger: logger).flatMapThrowing { value in
                    let pipeline = channel.pipeline.syncOperations
                    try pipeline.addHandler(SilentPeerCloser(), position: .first)
                    try pipeline.addHandler(IdleStateHandler(readTimeout: silenceTimeout), position: .first)
                    return value
                }
            }
        }.map { negotiated in
            negotiated.whenComplete { _ in
                deadline.cancel()
                // From here Hummingbird's HTTP/1 and HTTP/2 handlers answer a stop.
                channel.pipeline.syncOperations.removeHandler(stopBeforeHandshake, promise: nil)
            }
            return Value(negotiated: negotiated, channel: channel)
        }
    }

    public func handle(value: Value, logger: Logger) async {
        do {
            // A cancellation while the handshake is pending closes the socket rather than wait for it.
            let negotiated = try await withTaskCancellationHandler {
                try await value.negotiated.get()
            } onCancel: {
                value.channel.close(promise: nil)
            }
            switch negotiated {
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
    /// connections of either protocol close after `idleTimeout`, a handshake must end within `handshakeTimeout`, and
    /// an HTTP/2 connection silent for four idle timeouts (at least two minutes) is closed; `drain` follows the
    /// connections.
    public static func tls(
        _ tls: ServerTLS, idleTimeout: Duration?, handshakeTimeout: Duration = .seconds(10), drain: ConnectionDrain
    ) -> HTTPServerBuilder {
        HTTPServerBuilder { responder in
            let http1 = HTTP1Channel.Configuration(idleTimeout: idleTimeout.map { TimeAmount($0) })
            let channel = TLSServingChannel(
                http1: HTTP1Channel(responder: responder, configuration: http1),
                http2: HTTP2Channel(
                    responder: responder,
                    configuration: .init(
                        idleTimeout: idleTimeout,
                        streamConfiguration: .init(additionalChannelHandlers: [ConnectionFieldsRemover()]))),
                tls: tls, handshakeTimeout: TimeAmount(handshakeTimeout),
                silenceTimeout: TimeAmount(max((idleTimeout ?? .seconds(30)) * 4, .seconds(120))))
            return DrainTrackedChannel(channel, drain: drain)
        }
    }

    /// Plain HTTP/1, its connections followed by `drain`.
    public static func http1(drain: ConnectionDrain) -> HTTPServerBuilder {
        HTTPServerBuilder { responder in
            DrainTrackedChannel(HTTP1Channel(responder: responder, configuration: .init()), drain: drain)
        }
    }
}

/// Closes a connection when the ``IdleStateHandler`` before it reports that nothing was read for its timeout.
final class SilentPeerCloser: ChannelInboundHandler, Sendable {
    typealias InboundIn = NIOAny

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let idle = event as? IdleStateHandler.IdleStateEvent, idle == .read {
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }
}

/// Closes a connection whose TLS handshake has not finished when the server starts to stop (NIO's
/// `ChannelShouldQuiesceEvent`): no HTTP handler is there yet to end it, and the stop would wait for the handshake
/// timeout. Removed once the protocol is negotiated.
final class CloseOnQuiesce: ChannelInboundHandler, RemovableChannelHandler, Sendable {
    typealias InboundIn = NIOAny

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent {
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }
}
