import Hummingbird

/// The web app's request context: Hummingbird's basic one plus the port the connection arrived on, which the
/// `Host` check and the session cookie's name go by (the port is known only once the app listens: port 0 picks one).
struct WebRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    let localPort: Int

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        // A socket always has its address; a channel without one (HummingbirdTesting's) counts as HTTP's default
        // port, as a `Host` without a port does.
        localPort = source.channel.localAddress?.port ?? 80
    }
}
