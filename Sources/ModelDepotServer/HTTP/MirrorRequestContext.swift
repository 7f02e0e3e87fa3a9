import Hummingbird
import NIOCore

/// Hummingbird's basic context plus the connection, so a file at rest can be handed to the connection's
/// ``FileRegionHandler`` and sent with `sendfile`.
struct MirrorRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }
}
