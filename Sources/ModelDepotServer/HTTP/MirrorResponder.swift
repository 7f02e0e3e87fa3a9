import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import ModelDepotCore
import ModelDepotHub
import ModelDepotTransfer
import NIOCore

/// Answers Hub API requests from a ``RepositorySource``. One access-log line per request.
struct MirrorResponder: HTTPResponder {
    typealias Context = MirrorRequestContext

    let source: any RepositorySource
    let logger: Logger
    /// When set, every request must carry `Authorization: Bearer <token>`.
    let token: String?
    /// Tree entries per page; more come through `Link: <…>; rel="next"`.
    let treePageSize: Int
    /// Where LFS content is redirected to, when it is not streamed here.
    var lfsRedirectBase: URL? = nil
    /// Faults injected into file bodies on purpose (`serve --faults`).
    var faults: ServedFaults? = nil
    /// The counters `/metrics` shows.
    var metrics = MirrorMetrics()
    /// How long HTTP caches may keep an answer about a branch (answers at a commit id never change).
    var branchMaxAge: Duration = .seconds(60)
    /// Files at rest go out by sendfile (``FileRegionHandler``) rather than through the server's memory.
    var sendsFilesWithSendfile = true
    /// Who asked what, for the dashboard.
    var clients = MirrorClients()
    /// Small files answered from memory while unchanged.
    var smallFiles: SmallFileCache? = nil
    /// A web app under a prefix (the dashboard), which checks access itself.
    var mountedApp: MountedApp? = nil
    /// The `Host` names answered when there is no token (against DNS rebinding).
    var allowedHosts = AllowedHosts(extra: [])

    static func renderFaults(_ faults: ServedFaults) -> String { faults.metricLines }

    func respond(to request: Request, context: Context) async throws -> Response {
        let started = ContinuousClock.now
        clients.saw(context.channel.remoteAddress?.ipAddress ?? "unknown")
        let response: Response
        do {
            // The Host check comes first, for the dashboard as well: it shows who pulled what, and a rebinding
            // page must not read it from a mirror without a token.
            if token == nil, request.uri.path != "/healthz", !allowedHosts.allows(request.head.authority) {
                throw AllowedHosts.refusal(request.head.authority ?? "")
            }
            if let mountedApp, mountedApp.answers(request.uri.path) {
                response = try await mountedApp.respond(request)
            } else {
                response = try await route(request, context: context)
            }
        } catch let error as HubServerError {
            response = Self.errorResponse(error)
        } catch let error as ModelDepotError {
            response = Self.errorResponse(.badRequest(error.message))
        }
        metrics.countRequest(
            status: response.status.code, route: Self.routeClass(request.uri.path),
            duration: ContinuousClock.now - started)
        logger.info(
            "\(request.method) \(request.uri.path) \(response.status.code)",
            metadata: ["ms": "\(Int(((ContinuousClock.now - started) / .milliseconds(1)).rounded()))"])
        return response
    }

    /// Who asks, for the per-client limit on pulls: the peer's address.
    static func client(_ context: Context) -> String {
        context.channel.remoteAddress?.ipAddress ?? "unknown"
    }

    /// The histogram's grouping for a path (cheap: no full parse, and the same answer for refused requests).
    static func routeClass(_ path: String) -> MirrorMetrics.RouteClass {
        switch path {
        case "/metrics": return .metrics
        case "/healthz": return .health
        default:
            if path.hasPrefix("/api/") { return .api }
            if path.contains("/resolve/") { return .file }
            let name = path.dropFirst()
            if name.count == 64, name.allSatisfy(\.isHexDigit) { return .file }
            return .other
        }
    }

    private func route(_ request: Request, context: Context) async throws -> Response {
        if request.uri.path == "/healthz" {
            return Self.json(Self.healthy)
        }
        if let token, !Self.authorized(request, token: token) {
            throw request.headers[.authorization] == nil
                ? HubServerError(
                    status: 401, code: nil,
                    message: "Authentication required: this mirror needs a token (HF_TOKEN).", commit: nil)
                : HubServerError.unauthorized
        }
        guard let route = try HubRoute.parse(rawPath: request.uri.path) else {
            throw HubServerError.notAHubPath(request.uri.path)
        }
        let allowed: [HTTPRequest.Method] = if case .pathsInfo = route { [.post] } else { [.get, .head] }
        guard allowed.contains(request.method) else {
            throw HubServerError.methodNotAllowed(request.method.rawValue, allowed: allowed.map(\.rawValue))
        }
        let query = request.uri.queryParameters
        switch route {
        case .whoami:
            return try whoami(request)
        case .pathsInfo(let type, let id, let revision):
            let snapshot = try await snapshot(type, id, revision)
            let form = try await PathsInfoForm.read(from: request)
            var entries = HubJSON.pathsInfo(snapshot, paths: form.paths)
            if form.expand, let last = try await snapshot.history().first {
                entries = HubJSON.expanded(entries, lastCommit: last)
            }
            return marked(Self.json(entries), snapshot, revision: revision)
        case .commits(let type, let id, let revision):
            let snapshot = try await snapshot(type, id, revision)
            return marked(Self.json(HubJSON.commits(try await snapshot.history())), snapshot, revision: revision)
        case .health:
            return Self.json(Self.healthy)
        case .metrics:
            var response = Self.text(metrics.render() + (faults.map(Self.renderFaults) ?? ""))
            response.headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
            response.headers[.cacheControl] = "no-store"
            return response
        case .search(let type):
            var response = try await search(type: type, query: query)
            response.headers[.cacheControl] = cacheControl(revision: nil)
            return response
        case .info(let type, let id, let revision):
            let snapshot = try await snapshot(type, id, revision)
            let blobs = query["blobs"].map { $0.lowercased() == "true" } ?? false
            let info = snapshot.rendered.answer(blobs ? "info blobs" : "info") {
                RenderedAnswers.Answer(body: Self.jsonBody(HubJSON.info(snapshot, blobs: blobs)))
            }
            return marked(Self.json(info!.body), snapshot, revision: revision)
        case .refs(let type, let id):
            let snapshot = try await snapshot(type, id, nil)
            return marked(Self.json(HubJSON.refs(snapshot)), snapshot, revision: nil)
        case .tree(let type, let id, let revision, let path):
            let snapshot = try await snapshot(type, id, revision)
            let recursive = query["recursive"].map { $0.lowercased() == "true" } ?? false
            let expand = query["expand"].map { $0.lowercased() == "true" } ?? false
            if !expand, query["cursor"] == nil {
                // A listing that fits one page is kept with the snapshot; longer ones are paged as they come.
                let key = "tree \(recursive) \(path ?? "")"
                let listing = try snapshot.rendered.answer(key) {
                    guard let entries = HubJSON.tree(snapshot, path: path, recursive: recursive) else {
                        throw HubServerError.entryNotFound(path ?? "", commit: snapshot.commit)
                    }
                    guard entries.count <= treePageSize else { return nil }
                    return RenderedAnswers.Answer(body: Self.jsonBody(entries), totalCount: entries.count)
                }
                if let listing {
                    var response = Self.json(listing.body)
                    response.headers[HTTPField.Name("X-Total-Count")!] = "\(listing.totalCount ?? 0)"
                    return marked(response, snapshot, revision: revision)
                }
            }
            guard var entries = HubJSON.tree(snapshot, path: path, recursive: recursive) else {
                throw HubServerError.entryNotFound(path ?? "", commit: snapshot.commit)
            }
            if expand, let last = try await snapshot.history().first {
                entries = HubJSON.expanded(entries, lastCommit: last)
            }
            return marked(page(entries, request: request), snapshot, revision: revision)
        case .resolve(let type, let id, let revision, let path):
            guard let snapshot = try await source.snapshot(type: type, id: id, revision: revision, serving: path) else {
                throw HubServerError.repoNotFound(id.description)
            }
            guard let file = snapshot.file(at: path) else {
                throw HubServerError.entryNotFound(path, commit: snapshot.commit)
            }
            if let base = lfsRedirectBase, let sha256 = file.sha256 {
                return FileResponse.redirect(for: file, sha256: sha256, commit: snapshot.commit, to: base)
            }
            let (response, pulling) = try await fileResponse(file, of: snapshot, request, context)
            return pulling ? response : marked(response, snapshot, revision: revision)
        case .blob(let sha256):
            guard let (file, snapshot) = try await lfsFile(sha256: sha256) else {
                return Self.errorResponse(
                    HubServerError(status: 404, code: nil, message: "No file has SHA-256 \(sha256).", commit: nil))
            }
            // The same as a resolve: a listed blob the pull-through cache lacks is pulled (a GET only).
            var (response, pulling) = try await fileResponse(file, of: snapshot, request, context)
            if !pulling { response.headers[.cacheControl] = cacheControl(revision: snapshot.commit) }
            return response
        }
    }

    /// A file of `snapshot` as a response, and whether it is being pulled: a file the pull-through cache lacks is
    /// pulled first, for a GET only (a HEAD is answered from the listing); one at hand counts as a cache hit. Its
    /// body is read under the eye of the cache's budget, which spares what is being read.
    private func fileResponse(_ file: ServedFile, of snapshot: RepoSnapshot, _ request: Request, _ context: Context)
        async throws -> (Response, pulling: Bool)
    {
        let arriving =
            request.method == .get
            ? try snapshot.pullThrough?.pull(file, of: snapshot, for: Self.client(context)) : nil
        if request.method == .get, arriving == nil { metrics.count(.cacheHits) }
        var response = try await FileResponse.make(
            for: file, commit: snapshot.commit, request: request, context: context, faults: faults,
            arriving: arriving, metrics: metrics, sendfile: sendsFilesWithSendfile, smallFiles: smallFiles)
        if let pullThrough = snapshot.pullThrough { response.body = pullThrough.reading(snapshot, response.body) }
        return (response, arriving != nil)
    }

    /// An answer about `snapshot` with the headers HTTP caches go by: `Cache-Control` (an answer at a commit id
    /// never changes; one about a branch may change; one behind the mirror's token is `private`), and a
    /// `Warning` when the upstream could not be asked.
    private func marked(_ response: Response, _ snapshot: RepoSnapshot, revision: String?) -> Response {
        var response = response
        if let stale = snapshot.staleBecause {
            response.headers[.cacheControl] = cacheControl(revision: nil, maxAge: .zero)
            response.headers[HTTPField.Name("Warning")!] =
                "110 modeldepot \"Response is Stale: \(stale.replacingOccurrences(of: "\"", with: "'"))\""
        } else {
            response.headers[.cacheControl] = cacheControl(revision: revision)
        }
        return response
    }

    func cacheControl(revision: String?, maxAge: Duration? = nil) -> String {
        let scope = token == nil ? "public" : "private"
        if maxAge == nil, let revision, HubEncoding.isGitID(revision) {
            return "\(scope), max-age=31536000, immutable"
        }
        return "\(scope), max-age=\((maxAge ?? branchMaxAge).components.seconds)"
    }

    /// The first served LFS file with this content, and the snapshot that lists it.
    private func lfsFile(sha256: String) async throws -> (ServedFile, RepoSnapshot)? {
        for (type, id) in try source.repositories() {
            guard let snapshot = try? await source.recordedSnapshot(type: type, id: id) else { continue }
            if let file = snapshot.files.first(where: { $0.sha256 == sha256 }) { return (file, snapshot) }
        }
        return nil
    }

    private func snapshot(_ type: RepoType, _ id: RepoID, _ revision: String?) async throws -> RepoSnapshot {
        guard let snapshot = try await source.snapshot(type: type, id: id, revision: revision) else {
            throw HubServerError.repoNotFound(id.description)
        }
        return snapshot
    }

    private func search(type: RepoType, query: FlatDictionary<Substring, Substring>) async throws -> Response {
        let text = query["search"].map { String($0).lowercased() }
        let author = query["author"].map(String.init)
        let limit = query["limit"].flatMap { Int($0) } ?? 1000
        var results: [[String: Any]] = []
        for (repoType, id) in try source.repositories() where repoType == type {
            if let text, !id.description.lowercased().contains(text) { continue }
            if let author, id.namespace != author { continue }
            guard let snapshot = try? await source.recordedSnapshot(type: repoType, id: id) else { continue }
            results.append(HubJSON.summary(snapshot))
            if results.count >= limit { break }
        }
        return Self.json(results)
    }

    /// One page of a listing, with a `Link` to the next one when there is more (the Hub's pagination).
    private func page(_ entries: [[String: Any]], request: Request) -> Response {
        let start = min(entries.count, max(0, request.uri.queryParameters["cursor"].flatMap { Int($0) } ?? 0))
        let end = min(entries.count, start + treePageSize)
        var response = Self.json(Array(entries[start..<end]))
        if end < entries.count {
            let host = request.head.authority ?? "127.0.0.1"
            var query = request.uri.queryParameters.filter { $0.key != "cursor" }.map {
                "\(HubEncoding.encodeSegment(String($0.key)))=\(HubEncoding.encodeSegment(String($0.value)))"
            }
            query.append("cursor=\(end)")
            response.headers[HTTPField.Name("Link")!] =
                "<http://\(host)\(request.uri.path)?\(query.joined(separator: "&"))>; rel=\"next\""
        }
        response.headers[HTTPField.Name("X-Total-Count")!] = "\(entries.count)"
        return response
    }

    /// Constant-time comparison of the bearer token, so timing does not leak how much of a guess was right.
    static func authorized(_ request: Request, token: String) -> Bool {
        guard let header = request.headers[.authorization], header.hasPrefix("Bearer ") else { return false }
        let given = Array(header.dropFirst(7).utf8)
        let expected = Array(token.utf8)
        var difference = given.count ^ expected.count
        for index in 0..<max(given.count, expected.count) {
            difference |= Int((index < given.count ? given[index] : 0) ^ (index < expected.count ? expected[index] : 0))
        }
        return difference == 0
    }

    static func text(_ text: String) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/plain; charset=utf-8"
        headers[.contentLength] = "\(text.utf8.count)"
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }

    /// `/healthz`'s answer, made once: load balancers ask it often.
    static let healthy = jsonBody(["status": "ok"])

    static func json(_ object: Any) -> Response { json(jsonBody(object)) }

    static func jsonBody(_ object: Any) -> ByteBuffer {
        let data =
            (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]))
            ?? Data("{}".utf8)
        return ByteBuffer(bytes: data)
    }

    static func json(_ body: ByteBuffer) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json; charset=utf-8"
        headers[.contentLength] = "\(body.readableBytes)"
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: body))
    }

    static func errorResponse(_ error: HubServerError) -> Response {
        var body =
            (try? JSONSerialization.data(withJSONObject: ["error": error.message], options: [.sortedKeys])) ?? Data()
        if body.isEmpty { body = Data("{}".utf8) }
        var headers = HTTPFields()
        headers[.contentType] = "application/json; charset=utf-8"
        headers[.contentLength] = "\(body.count)"
        if let code = error.code { headers[HTTPField.Name("X-Error-Code")!] = code }
        headers[HTTPField.Name("X-Error-Message")!] = error.message
        if let commit = error.commit { headers[HTTPField.Name("X-Repo-Commit")!] = commit }
        if let wait = error.retryAfter { headers[.retryAfter] = "\(max(1, wait.components.seconds))" }
        if !error.allow.isEmpty { headers[.allow] = error.allow.joined(separator: ", ") }
        headers[.cacheControl] = "no-store"
        if error.status == 401 {
            headers[.wwwAuthenticate] = "Bearer realm=\"Authentication required\", charset=\"UTF-8\""
        }
        return Response(
            status: HTTPResponse.Status(code: error.status), headers: headers,
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
    }
}
