import Hummingbird
import ModelDepotCore
import ModelDepotHTTP

/// The Hub's URL grammar on Hummingbird's router. Repository ids are one segment (`gpt2`) or two (`acme/bert`).
/// Where a path reads both ways, the two-segment reading wins, as it always did here: `/api/models/acme/refs` is the
/// repository `acme/refs`, and `/api/models/acme/tree/revision/main` is `acme/tree` at `main`. The router tries a
/// path's literal segments before its captures and does not come back to try another reading, so a repository
/// whose name is one of the keywords (`tree`, `revision`, `refs`, `paths-info`, `commits`, `bom`, `resolve`) has routes of
/// its own, with the keyword as a literal. Captured segments are percent-decoded one by one, so `%2F` stays inside
/// its segment (`refs%2Fpr%2F1`, a tree path `a%2Fb`).
extension HubEndpoints {
    /// Names at the top of the path that are the mirror's own (`/metrics`, the dashboard's `/ui`) and may also be a
    /// repository owner's: their resolve routes are registered under them too, since the router does not come back
    /// to the top level to try the owner capture once a literal first segment matched.
    static let ownNames = ["healthz", "metrics"]

    /// The words after a repository id in the API's paths.
    static let keywords = ["revision", "tree", "refs", "paths-info", "commits", "bom"]

    /// A way a path spells a repository id: the router path up to it, and the id from the captures.
    struct IDShape: Sendable {
        let path: String
        let id: @Sendable (Parameters) throws -> RepoID
    }

    /// Registers every Hub route on `routes`. `mountedPrefixes` are the top-level names other route groups take
    /// (`ui`), under which repositories must still resolve.
    func addRoutes(to routes: some RouterMethods<Context>, mountedPrefixes: [String]) {
        let read: [HTTPRequest.Method] = [.get, .head]
        routes.endpoint("/api/whoami-v2", read) { _, _ in try whoami() }
        routes.endpoint("/metrics", read) { _, _ in metricsPage() }
        routes.endpoint("/:a", read) { request, context in
            try await blob(sha256: context.parameters.decoded("a") ?? "", request: request, context: context)
        }
        for type in RepoType.allCases {
            let api = "/api/\(type.apiSegment)"
            routes.endpoint(RouterPath(api), read) { request, _ in try await search(type, request: request) }
            // The two-segment ids whose name is a keyword first, then any two segments, then one: for a path
            // matched by several, the first registered is not what decides (literals are tried first), but a
            // one-segment route is never registered where a two-segment one has the same path.
            var shapes = Self.keywords.map { keyword in
                IDShape(path: "\(api)/:a/\(keyword)") { try Self.id($0, ":a", keyword) }
            }
            shapes.append(IDShape(path: "\(api)/:a/:b") { try Self.id($0, ":a", ":b") })
            for shape in shapes { addAPIRoutes(to: routes, type: type, shape) }
            addAPIRoutes(to: routes, type: type, IDShape(path: "\(api)/:a") { try Self.id($0, ":a") }, exceptBare: true)
            let prefix = type == .model ? "" : "/\(type.apiSegment)"
            addResolveRoutes(to: routes, type: type, prefix: prefix, owner: nil)
        }
        for name in Self.ownNames + mountedPrefixes {
            addResolveRoutes(to: routes, type: .model, prefix: "", owner: name)
        }
    }

    /// The API's routes after one spelling of an id: info, at a revision, refs, paths-info, commits, tree.
    /// `exceptBare`: a one-segment id followed by a keyword alone (`/api/models/acme/refs`) is the two-segment
    /// repository, so those routes are not registered for it.
    private func addAPIRoutes(
        to routes: some RouterMethods<Context>, type: RepoType, _ shape: IDShape, exceptBare: Bool = false
    ) {
        let read: [HTTPRequest.Method] = [.get, .head]
        let id = shape.path
        let repo = { @Sendable (context: Context) throws -> RepoID in try shape.id(context.parameters) }
        routes.endpoint(RouterPath(id), read) { request, context in
            try await info(type, repo(context), revision: nil, request: request)
        }
        routes.endpoint(RouterPath("\(id)/revision/:revision"), read) { request, context in
            try await info(type, repo(context), revision: Self.revision(context), request: request)
        }
        if !exceptBare {
            routes.endpoint(RouterPath("\(id)/refs"), read) { _, context in try await refs(type, repo(context)) }
        }
        routes.endpoint(RouterPath("\(id)/paths-info/:revision"), [.post]) { request, context in
            try await pathsInfo(type, repo(context), revision: Self.revision(context), request: request)
        }
        routes.endpoint(RouterPath("\(id)/xet-read-token/:revision"), read) { request, context in
            try await xetToken(type, repo(context), revision: Self.revision(context), writes: false, request: request)
        }
        routes.endpoint(RouterPath("\(id)/xet-write-token/:revision"), read) { request, context in
            try await xetToken(type, repo(context), revision: Self.revision(context), writes: true, request: request)
        }
        routes.endpoint(RouterPath("\(id)/commits/:revision"), read) { _, context in
            try await commits(type, repo(context), revision: Self.revision(context))
        }
        // The mirror's own: a cached revision's bill of materials (issue 66).
        // GET only: a HEAD would hash the whole model for nothing.
        routes.endpoint(RouterPath("\(id)/bom/:revision"), [.get]) { _, context in
            try await billOfMaterials(type, repo(context), revision: Self.revision(context))
        }
        routes.endpoint(RouterPath("\(id)/tree/:revision"), read) { request, context in
            try await tree(type, repo(context), revision: Self.revision(context), path: nil, request: request)
        }
        routes.endpoint(RouterPath("\(id)/tree/:revision/**"), read) { request, context in
            try await tree(
                type, repo(context), revision: Self.revision(context), path: context.parameters.decodedCatchAll(),
                request: request)
        }
    }

    /// `{prefix}/{owner}/{name}/resolve/{revision}/{path}` and `{prefix}/{name}/resolve/{revision}/{path}`, where
    /// the first segment is the capture `:a`, or `owner` when the route is for a name the mirror also uses; and
    /// `{owner}/resolve/resolve/…`, the repository named `resolve`, which the router would read as the one-segment
    /// id at revision `resolve`.
    private func addResolveRoutes(
        to routes: some RouterMethods<Context>, type: RepoType, prefix: String, owner: String?
    ) {
        let first = owner ?? ":a"
        let shapes = [
            IDShape(path: "\(prefix)/\(first)/resolve") { try Self.id($0, first, "resolve") },
            IDShape(path: "\(prefix)/\(first)/:b") { try Self.id($0, first, ":b") },
            IDShape(path: "\(prefix)/\(first)") { try Self.id($0, first) },
        ]
        for shape in shapes {
            routes.endpoint(RouterPath("\(shape.path)/resolve/:revision/**"), [.get, .head]) { request, context in
                try await resolve(
                    type, try shape.id(context.parameters), revision: Self.revision(context),
                    path: context.parameters.decodedCatchAll(), request: request, context: context)
            }
        }
    }

    /// A repository id from path parts: a capture (`:a`) is read from the parameters, anything else is taken as
    /// written.
    static func id(_ parameters: Parameters, _ first: String, _ second: String? = nil) throws -> RepoID {
        func part(_ part: String) -> String {
            part.hasPrefix(":") ? parameters.decoded(String(part.dropFirst())) ?? "" : part
        }
        guard let second else { return try RepoID(part(first)) }
        return try RepoID(part(first) + "/" + part(second))
    }

    static func revision(_ context: Context) -> String { context.parameters.decoded("revision") ?? "" }
}
