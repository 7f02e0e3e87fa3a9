#if MODELDEPOT_SERVER_STACK
    import ModelDepotTransfer

    extension AsyncHTTPTransport {
        /// A client for tests that look at a server under test (a mirror, a page, a peer): it waits as long as the
        /// suite's other waits (``waitUntil(timeout:_:)``) for an answer. How fast a server answers is a benchmark's
        /// question; here a server whose event loops fall behind while the other tests keep both cores busy must not
        /// fail the test with the shared client's 20 s read timeout (a listing request once did).
        package static let patient: AsyncHTTPTransport = {
            var configuration = AsyncHTTPTransport.Configuration()
            configuration.readTimeout = .seconds(90)
            configuration.connectTimeout = .seconds(90)
            return AsyncHTTPTransport(configuration: configuration)
        }()
    }
#endif
