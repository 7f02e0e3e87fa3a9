import HummingbirdCore
import Logging
import NIOCore
import NIOSSL

/// Hummingbird's HTTP/1 channel behind TLS with the mirror's current certificate (``MirrorTLS``), taken per
/// connection so a reload reaches new connections. No ``FileRegionHandler``: NIOSSL's handler takes only
/// `ByteBuffer` writes, so files go through memory here, never by `sendfile`.
struct TLSServingHTTP1Channel: ServerChildChannel {
    let base: HTTP1Channel
    let tls: MirrorTLS

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<HTTP1Channel.Value> {
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls.context))
        }.flatMap {
            base.setup(channel: channel, logger: logger)
        }
    }

    func handle(value: HTTP1Channel.Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}

extension HTTPServerBuilder {
    /// HTTP/1 over TLS with the certificate `tls` holds now.
    static func tlsHTTP1(configuration: HTTP1Channel.Configuration, tls: MirrorTLS) -> HTTPServerBuilder {
        HTTPServerBuilder { responder in
            TLSServingHTTP1Channel(base: HTTP1Channel(responder: responder, configuration: configuration), tls: tls)
        }
    }
}
