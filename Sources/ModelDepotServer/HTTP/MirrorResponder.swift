import Hummingbird
import ModelDepotCore

/// The mirror's responder: the ``HubFastPath``'s routes answered directly, through the same access log, error
/// answers, `Host` check and token check the router's middleware applies (`/healthz` through the first two only,
/// as behind the router), and every other request through the router. A middleware added to the router
/// (``MirrorServer/makeRouter()``) must be added here too, or the most frequent requests would pass without it.
struct MirrorResponder: HTTPResponder {
    typealias Context = MirrorRequestContext

    let router: RouterResponder<Context>
    /// Nil when the routes have a shape the fast path cannot read beside (everything then goes to the router).
    let fastPath: HubFastPath?
    let endpoints: HubEndpoints
    let accessLog: MirrorAccessLog
    let errors: HubErrors
    /// Set when the mirror has no token (the router's ``HostCheckMiddleware``).
    let hostCheck: HostCheckMiddleware?
    /// Set when the mirror has a token (the router's ``BearerTokenMiddleware``).
    let tokenCheck: BearerTokenMiddleware?

    func respond(to request: Request, context: Context) async throws -> Response {
        guard let route = fastPath?.route(request.method, request.uri.path) else {
            return try await router.respond(to: request, context: context)
        }
        // In the router's order: the access log outermost, errors answered inside it, then the checks.
        return try await accessLog.handle(request, context: context) { request, context in
            do {
                // `/healthz` comes before the checks, as behind the router: load balancers ask by any name.
                if route != .health {
                    try hostCheck?.check(request)
                    try tokenCheck?.check(request)
                }
                switch route {
                case .resolve(let owner, let name, let revision, let path):
                    return try await endpoints.resolve(
                        .model, try RepoID(owner + "/" + name), revision: revision, path: path, request: request,
                        context: context)
                case .info(let type, let owner, let name):
                    return try await endpoints.info(
                        type, try RepoID(owner + "/" + name), revision: nil, request: request)
                case .health:
                    return HubEndpoints.json(HubEndpoints.healthy)
                }
            } catch {
                return errors.answer(error, to: request).response
            }
        }
    }
}
