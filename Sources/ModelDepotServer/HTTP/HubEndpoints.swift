import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import ModelDepot
import ModelDepotCore
import ModelDepotHub
import ModelDepotTransfer
import NIOCore

/// What the mirror answers on the Hub's routes, one method per route (``HubEndpoints/addRoutes(to:)`` registers
/// them on the router): listings and files of a ``RepositorySource``, search, metrics.
struct HubEndpoints: Sendable {
    typealias Context = MirrorRequestContext

    let source: any RepositorySource
    /// When set, every request must carry `Authorization: Bearer <token>` (``BearerTokenMiddleware``); answers
    /// are then `private` to HTTP caches.
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
    /// Small files answered from memory while unchanged.
    var smallFiles: SmallFileCache? = nil
    /// The scheme clients reach this server by (`https` with `--tls-cert`), for the absolute URLs of `Link` headers.
    var scheme = "http"
    /// Xet's side (`serve --xet`): files offered through Xet once indexed; nil: plain HTTP only.
    var xet: XetStore? = nil
    /// Lets one bill of materials be made at a time.
    let billsOfMaterials = BillOfMaterialsGate()

    static func renderFaults(_ faults: ServedFaults) -> String { faults.metricLines }

    /// Who asks, for the per-client limit on pulls: the peer's address.
    static func client(_ context: Context) -> String {
        context.channel.remoteAddress?.ipAddress ?? "unknown"
    }

    // MARK: Routes

    /// `POST …/paths-info/{revision}`: the tree entries of the paths in the body (`get_paths_info`).
    func pathsInfo(_ type: RepoType, _ id: RepoID, revision: String, request: Request) async throws -> Response {
        let snapshot = try await snapshot(type, id, revision)
        let form = try await PathsInfoForm.read(from: request)
        var entries = await withXetHashes(HubJSON.pathsInfo(snapshot, paths: form.paths), snapshot)
        if form.expand, let last = await Self.lastCommit(of: snapshot) {
            entries = HubJSON.expanded(entries, lastCommit: last)
        }
        return marked(Self.json(entries), snapshot, revision: revision)
    }

    /// `GET …/commits/{revision}`: the commits that lead to the revision (`list_repo_commits`).
    func commits(_ type: RepoType, _ id: RepoID, revision: String) async throws -> Response {
        let snapshot = try await snapshot(type, id, revision)
        return marked(Self.json(HubJSON.commits(try await snapshot.history())), snapshot, revision: revision)
    }

    /// The newest commit, for an expanded listing's `lastCommit`; nil when the upstream cannot say (a hub without a
    /// `/commits` route, as some mirrors are): the listing then goes out without `lastCommit` rather than failing
    /// whole. (`GET …/commits` itself still answers the upstream's error.)
    static func lastCommit(of snapshot: RepoSnapshot) async -> RepoCommit? {
        try? await snapshot.history().first
    }

    /// `/metrics`: counters in Prometheus' text format.
    func metricsPage() -> Response {
        var response = Self.text(metrics.render() + (faults.map(Self.renderFaults) ?? ""))
        response.headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
        response.headers[.cacheControl] = "no-store"
        return response
    }

    /// `GET /api/models` (or datasets, spaces): the repositories of one type, filtered as the Hub filters.
    func search(_ type: RepoType, request: Request) async throws -> Response {
        var response = try await search(type: type, query: request.uri.queryParameters)
        response.headers[.cacheControl] = cacheControl(revision: nil)
        return response
    }

    /// `GET /api/models/{id}[/revision/{revision}]`: a repository's info, with `?blobs=true` its files' sizes and
    /// LFS digests.
    func info(_ type: RepoType, _ id: RepoID, revision: String?, request: Request) async throws -> Response {
        let snapshot = try await snapshot(type, id, revision)
        let blobs = request.uri.queryParameters["blobs"].map { $0.lowercased() == "true" } ?? false
        let info = snapshot.rendered.answer(blobs ? "info blobs" : "info") {
            RenderedAnswers.Answer(body: Self.jsonBody(HubJSON.info(snapshot, blobs: blobs)))
        }
        return marked(Self.json(info!.body), snapshot, revision: revision)
    }

    /// `GET /api/models/{id}/refs`: branches and tags.
    func refs(_ type: RepoType, _ id: RepoID) async throws -> Response {
        let snapshot = try await snapshot(type, id, nil)
        return marked(Self.json(HubJSON.refs(snapshot)), snapshot, revision: nil)
    }

    /// `GET /api/models/{id}/tree/{revision}[/{path}]`: a listing, paged, `recursive` and `expand` as the Hub.
    func tree(_ type: RepoType, _ id: RepoID, revision: String, path: String?, request: Request) async throws
        -> Response
    {
        let query = request.uri.queryParameters
        let snapshot = try await snapshot(type, id, revision)
        let recursive = query["recursive"].map { $0.lowercased() == "true" } ?? false
        let expand = query["expand"].map { $0.lowercased() == "true" } ?? false
        // With Xet, listings carry each indexed file's xetHash, which appears as indexes are built: not kept.
        if !expand, query["cursor"] == nil, xet == nil {
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
        entries = await withXetHashes(entries, snapshot)
        if expand, let last = await Self.lastCommit(of: snapshot) {
            entries = HubJSON.expanded(entries, lastCommit: last)
        }
        return marked(page(entries, request: request), snapshot, revision: revision)
    }

    /// `…/{id}/resolve/{revision}/{path}`: a file, streamed, sent by `sendfile`, pulled through, or redirected to
    /// the CDN base.
    func resolve(
        _ type: RepoType, _ id: RepoID, revision: String, path: String, request: Request, context: Context
    ) async throws -> Response {
        guard let snapshot = try await source.snapshot(type: type, id: id, revision: revision, serving: path) else {
            throw HubServerError.repoNotFound(id.description)
        }
        guard let file = snapshot.file(at: path) else {
            throw HubServerError.entryNotFound(path, commit: snapshot.commit)
        }
        let xetHeaders = await xetHeaders(for: file, type, id, commit: snapshot.commit, request: request)
        if let base = lfsRedirectBase, let sha256 = file.sha256 {
            var response = FileResponse.redirect(for: file, sha256: sha256, commit: snapshot.commit, to: base)
            response.headers.append(contentsOf: xetHeaders)
            return response
        }
        var (response, pulling) = try await fileResponse(file, of: snapshot, request, context)
        response.headers.append(contentsOf: xetHeaders)
        return pulling ? response : marked(response, snapshot, revision: revision)
    }

    /// `/{sha256}`: an LFS file's content by its SHA-256, as a CDN serves it (what ``MirrorServer/lfsRedirectBase``
    /// points at, when the mirror is its own CDN).
    func blob(sha256: String, request: Request, context: Context) async throws -> Response {
        guard HubEncoding.isSHA256(sha256) else { throw HubServerError.notAHubPath(request.uri.path) }
        guard let (file, snapshot) = try await lfsFile(sha256: sha256) else {
            throw HubServerError(status: 404, code: nil, message: "No file has SHA-256 \(sha256).", commit: nil)
        }
        // The same as a resolve: a listed blob the pull-through cache lacks is pulled (a GET only).
        var (response, pulling) = try await fileResponse(file, of: snapshot, request, context)
        if !pulling { response.headers[.cacheControl] = cacheControl(revision: snapshot.commit) }
        return response
    }

    /// A file of `snapshot` as a response, and whether it is being pulled: a file the pull-through cache lacks is
    /// pulled first, for a GET only (a HEAD is answered from the listing); one at hand counts as a cache hit. Its
    /// body is read under the eye of the cache's budget, which spares what is being read.
    func fileResponse(_ file: ServedFile, of snapshot: RepoSnapshot, _ request: Request, _ context: Context)
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
        } else if response.headers.contains(.cacheControl) {
            response.headers[.cacheControl] = cacheControl(revision: revision)
        } else {
            // Most answers have none yet: appending skips the setter's search and rewrite of the fields.
            response.headers.append(HTTPField(name: .cacheControl, value: cacheControl(revision: revision)))
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

    func snapshot(_ type: RepoType, _ id: RepoID, _ revision: String?) async throws -> RepoSnapshot {
        guard let snapshot = try await source.snapshot(type: type, id: id, revision: revision) else {
            throw HubServerError.repoNotFound(id.description)
        }
        return snapshot
    }

    private func search(type: RepoType, query: FlatDictionary<Substring, Substring>) async throws -> Response {
        let text = query["search"].map { String($0).lowercased() }
        let author = query["author"].map(String.init)
        // 1…1000, as the Hub pages: a client's number is never trusted as a count.
        let limit = min(1000, max(1, query["limit"].flatMap { Int($0) } ?? 1000))
        // A pull-through mirror asks its upstream (what it holds is a part of that); its own repositories that the
        // upstream does not list (a folder root's) come after.
        var results = await source.upstreamSearch(type: type, text: text, author: author, limit: limit) ?? []
        var listed = Set(results.compactMap { $0["id"] as? String })
        for (repoType, id) in try source.repositories() where repoType == type {
            guard results.count < limit, listed.insert(id.description).inserted else { continue }
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
                "<\(scheme)://\(host)\(request.uri.path)?\(query.joined(separator: "&"))>; rel=\"next\""
        }
        response.headers[HTTPField.Name("X-Total-Count")!] = "\(entries.count)"
        return response
    }

    static func text(_ text: String, contentType: String = "text/plain; charset=utf-8") -> Response {
        var headers = HTTPFields()
        headers[.contentType] = contentType
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
        headers.append(HTTPField(name: .contentType, value: "application/json; charset=utf-8"))
        headers.append(HTTPField(name: .contentLength, value: String(body.readableBytes)))
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: body))
    }
}
