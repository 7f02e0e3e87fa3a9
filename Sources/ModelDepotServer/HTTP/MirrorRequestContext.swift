import Hummingbird
import NIOCore

/// The mirror's request context: Hummingbird's basic one plus the connection, so a file at rest can be handed to
/// the connection's ``FileRegionHandler`` and sent with `sendfile`. Public because routes other modules mount on
/// the mirror (``MirrorServer/mount(_:onDrain:routes:)``) are registered with it.
public struct MirrorRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    let channel: any Channel

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }
}
