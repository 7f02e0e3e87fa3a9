import Hummingbird
import ModelDepotCore
import ModelDepotHTTP

/// The Hub's URL grammar on Hummingbird's router. Repository ids are one segment (`gpt2`) or two (`acme/bert`);
/// the router tries a path's literal segments before its captures, so where a two-segment id's name is also a
/// keyword (`/api/models/acme/refs`), the keyword wins — as it does on the Hub — and the routes below say which
/// names are both. Captured segments are percent-decoded one by one, so `%2F` stays inside its segment
/// (`refs%2Fpr%2F1`, a tree path `a%2Fb`).
extension HubEndpoints {
    /// Names at the top of the path that are the mirror's own (`/metrics`, the dashboard's `/ui`) and may also be a
    /// repository owner's: their resolve routes are registered under them too, since the router does not come back
    /// to the top level to try the owner capture once a literal first segment matched.
    static let ownNames = ["healthz", "metrics"]

    /// Registers every Hub route on `routes` (the group behind the token check). `mountedPrefixes` are the
    /// top-level names other route groups take (`ui`), under which repositories must still resolve.
    func addRoutes(to routes: RouterGroup<Context>, mountedPrefixes: [String]) {
        let read: [HTTPRequest.Method] = [.get, .head]
        routes.endpoint("/api/whoami-v2", read) { _, _ in try whoami() }
        routes.endpoint("/metrics", read) { _, _ in metricsPage() }
        routes.endpoint("/:a", read) { request, context in
            try await blob(sha256: context.parameters.decoded("a") ?? "", request: request, context: context)
        }
        for type in RepoType.allCases {
            let api = "/api/\(type.apiSegment)"
            routes.endpoint(RouterPath(api), read) { request, _ in try await search(type, request: request) }
            for length in [2, 1] {
                let id = length == 2 ? "\(api)/:a/:b" : "\(api)/:a"
                let repo = { @Sendable (context: Context) throws -> RepoID in try Self.repoID(context, length) }
                routes.endpoint(RouterPath(id), read) { request, context in
                    try await info(type, repo(context), revision: nil, request: request)
                }
                routes.endpoint(RouterPath("\(id)/revision/:revision"), read) { request, context in
                    try await info(type, repo(context), revision: Self.revision(context), request: request)
                }
                routes.endpoint(RouterPath("\(id)/refs"), read) { _, context in try await refs(type, repo(context)) }
                routes.endpoint(RouterPath("\(id)/paths-info/:revision"), [.post]) { request, context in
                    try await pathsInfo(type, repo(context), revision: Self.revision(context), request: request)
                }
                routes.endpoint(RouterPath("\(id)/commits/:revision"), read) { _, context in
                    try await commits(type, repo(context), revision: Self.revision(context))
                }
                routes.endpoint(RouterPath("\(id)/tree/:revision"), read) { request, context in
                    try await tree(type, repo(context), revision: Self.revision(context), path: nil, request: request)
                }
                routes.endpoint(RouterPath("\(id)/tree/:revision/**"), read) { request, context in
                    try await tree(
                        type, repo(context), revision: Self.revision(context),
                        path: context.parameters.decodedCatchAll(), request: request)
                }
            }
            // `acme/tree` and the like: a two-segment id whose name is a keyword that needs more segments after it.
            for keyword in ["revision", "paths-info", "commits", "tree"] {
                routes.endpoint(RouterPath("\(api)/:a/\(keyword)"), read) { request, context in
                    let id = try RepoID("\(context.parameters.decoded("a") ?? "")/\(keyword)")
                    return try await info(type, id, revision: nil, request: request)
                }
            }
            addResolveRoutes(to: routes, type: type, prefix: type == .model ? "" : "/\(type.apiSegment)", owner: nil)
        }
        for name in Self.ownNames + mountedPrefixes {
            addResolveRoutes(to: routes, type: .model, prefix: "", owner: name)
        }
    }

    /// `{prefix}/{owner}/{name}/resolve/{revision}/{path}` and `{prefix}/{name}/resolve/{revision}/{path}`, where
    /// the first segment is the capture `:a`, or `owner` when the route is for a name the mirror also uses.
    private func addResolveRoutes(to routes: RouterGroup<Context>, type: RepoType, prefix: String, owner: String?) {
        for length in [2, 1] {
            let id = "\(prefix)/\(owner ?? ":a")" + (length == 2 ? "/:b" : "")
            routes.endpoint(RouterPath("\(id)/resolve/:revision/**"), [.get, .head]) { request, context in
                let first = owner ?? context.parameters.decoded("a") ?? ""
                let id = length == 2 ? "\(first)/\(context.parameters.decoded("b") ?? "")" : first
                return try await resolve(
                    type, try RepoID(id), revision: Self.revision(context), path: context.parameters.decodedCatchAll(),
                    request: request, context: context)
            }
        }
    }

    /// The repository id in the captures `a` (and `b` for a two-segment id).
    static func repoID(_ context: Context, _ length: Int) throws -> RepoID {
        let owner = context.parameters.decoded("a") ?? ""
        return try RepoID(length == 2 ? "\(owner)/\(context.parameters.decoded("b") ?? "")" : owner)
    }

    static func revision(_ context: Context) -> String { context.parameters.decoded("revision") ?? "" }
}
