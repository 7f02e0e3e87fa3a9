import HummingbirdCore
import Logging
import ModelDepotHTTP
import NIOCore
import NIOHTTP1

/// Hummingbird's HTTP/1 channel with a ``FileRegionHandler`` under its codec, so routes can send files at rest
/// with `sendfile`. One listener, the same routes and checks.
struct FileServingHTTP1Channel: ServerChildChannel {
    let base: HTTP1Channel
    let drain: ConnectionDrain

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<HTTP1Channel.Value> {
        base.setup(channel: channel, logger: logger).flatMapThrowing { value in
            let pipeline = channel.pipeline.syncOperations
            // Below the codec (which only knows ByteBuffer bodies), above the encoder (which passes file regions
            // through when the length is known).
            try pipeline.addHandler(
                FileRegionHandler(drain: drain), position: .after(try pipeline.handler(type: HTTPResponseEncoder.self)))
            return value
        }
    }

    func handle(value: HTTP1Channel.Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}

extension HTTPServerBuilder {
    /// HTTP/1 with files at rest sent by `sendfile` (see ``FileRegionHandler``), its connections followed by
    /// `drain`.
    static func fileServingHTTP1(configuration: HTTP1Channel.Configuration, drain: ConnectionDrain)
        -> HTTPServerBuilder
    {
        HTTPServerBuilder { responder in
            DrainTrackedChannel(
                FileServingHTTP1Channel(
                    base: HTTP1Channel(responder: responder, configuration: configuration), drain: drain),
                drain: drain)
        }
    }
}
