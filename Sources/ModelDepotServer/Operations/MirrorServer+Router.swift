import Foundation
import Hummingbird
import ModelDepotHTTP

extension MirrorServer {
    /// Routes another module answers under a top-level name of the mirror's port (the dashboard at `/ui`), with
    /// access checks of their own.
    struct Mount: Sendable {
        let prefix: String
        let routes: @Sendable (RouterGroup<MirrorRequestContext>) -> Void
        let onDrain: @Sendable () -> Void
    }

    /// Answers `routes` under `/prefix` on the mirror's port (`serve --ui` mounts the dashboard at `/ui`). They pass
    /// the mirror's access log and `Host` check, not its token check: a browser cannot send `Authorization` on page
    /// loads, so they check access themselves. A repository whose owner is named `prefix` still resolves.
    ///
    /// - Parameter onDrain: called once when the mirror starts to drain, to end what would keep a connection open
    ///   (event streams), so the drain does not wait for it.
    public mutating func mount(
        _ prefix: String, onDrain: @escaping @Sendable () -> Void = {},
        routes: @escaping @Sendable (RouterGroup<MirrorRequestContext>) -> Void
    ) {
        mounts.append(Mount(prefix: prefix, routes: routes, onDrain: onDrain))
    }

    /// The mirror's router. Middleware applies to the routes registered after it, and all of it to paths no route
    /// has; so, outermost first: the access log and metrics, errors to answers, then `/healthz` (open to load
    /// balancers by any name), then the `Host` check (a mirror without a token), the mounted groups, the token
    /// check, the Hub's routes, and last the 405 for a method a path does not take.
    func makeRouter() -> Router<MirrorRequestContext> {
        makeRouter(endpoints: endpoints)
    }

    /// Its middleware is replayed by ``MirrorResponder`` for the fast path's routes: add any new one there too.
    private func makeRouter(endpoints: HubEndpoints) -> Router<MirrorRequestContext> {
        let router = Router(context: MirrorRequestContext.self)
        router.add(middleware: accessLog)
        router.add(middleware: HubErrors(logger: logger).middleware)
        // MirrorResponder answers `/healthz` itself with the same answer, at this place in the middleware.
        router.endpoint("/healthz", [.get, .head]) { _, _ in HubEndpoints.json(HubEndpoints.healthy) }
        if let hostCheck { router.add(middleware: hostCheck) }
        for mount in mounts { mount.routes(router.group(RouterPath(mount.prefix))) }
        // The OCI registry's read side checks the token itself: registry clients send it only after a challenge.
        endpoints.addRegistryRoutes(to: router.group("/v2"), artifacts: registryArtifacts)
        // After the mounted groups, so it covers the Hub's routes and, as router middleware, every path no route
        // has: a caller without the token learns nothing of which paths and methods exist.
        if let token { router.add(middleware: BearerTokenMiddleware(token: token)) }
        endpoints.addRoutes(to: router, mountedPrefixes: mounts.map { String($0.prefix.drop { $0 == "/" }) })
        router.add(middleware: MethodNotAllowedMiddleware(routes: router.routes))
        return router
    }

    /// The router behind the ``HubFastPath`` for the Hub's two most frequent routes (what `run` serves).
    func makeResponder() -> MirrorResponder {
        let endpoints = endpoints
        let router = makeRouter(endpoints: endpoints)
        return MirrorResponder(
            router: router.buildResponder(), fastPath: HubFastPath(routes: router.routes.map(\.path)),
            endpoints: endpoints, accessLog: accessLog, errors: HubErrors(logger: logger), hostCheck: hostCheck,
            tokenCheck: token.map { BearerTokenMiddleware(token: $0) })
    }

    private var accessLog: MirrorAccessLog { MirrorAccessLog(logger: logger, metrics: metrics, clients: clients) }

    /// The `Host` check of a mirror without a token.
    private var hostCheck: HostCheckMiddleware? {
        token == nil ? HostCheckMiddleware(allowedHosts: AllowedHosts(extra: allowedHosts)) : nil
    }

    /// What answers the Hub's routes, from this server's settings.
    var endpoints: HubEndpoints {
        HubEndpoints(
            source: source, token: token, treePageSize: treePageSize, lfsRedirectBase: lfsRedirectBase,
            faults: faults, metrics: metrics, branchMaxAge: branchMaxAge,
            sendsFilesWithSendfile: sendsFilesWithSendfile && tls == nil,
            smallFiles: smallFiles, scheme: tls == nil ? "http" : "https", xet: xet)
    }

    /// Serves the files through Xet too (`serve --xet`): each file's Xet index is built in the background (at start,
    /// and within ``xetIndexInterval`` of a change, by ``XetIndexer``) and kept in `folder`; resolves then carry `X-Xet-Hash` and the `xet-auth` link, the
    /// `xet-read-token` route issues read tokens, and the CAS answers at `/xet` (a repository owned by `xet` still
    /// resolves). Off by default. With `acceptsUploads`, the `xet-write-token` route issues write tokens and the CAS
    /// takes xorbs and shards as the Hub's does (kept in `folder/uploads`, at most `uploadLimit` bytes of xorbs, read
    /// back through reconstructions).
    public mutating func enableXet(folder: URL, acceptsUploads: Bool = false, uploadLimit: Int64 = 16 << 30) {
        let store = XetStore(folder: folder, acceptsUploads: acceptsUploads, uploadLimit: uploadLimit)
        xet = store
        let routes = XetRoutes(store: store, scheme: tls == nil ? "http" : "https")
        mount("/xet") { routes.add(to: $0) }
        mount("/v1") { routes.addTelemetry(to: $0) }
    }
}
