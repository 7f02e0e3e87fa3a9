import Foundation
import ModelDepotCore
import ModelDepotTransfer

/// Talks to a Hugging Face–compatible Hub: repository info, tree listings, file metadata, search.
///
/// ```swift
/// let hub = HubClient(environment: HubEnvironment())
/// let info = try await hub.repoInfo(try RepoID("Qwen/Qwen2.5-0.5B-Instruct-GGUF"))
/// let files = try await hub.listFiles(try RepoID("Qwen/Qwen2.5-0.5B-Instruct-GGUF"), revision: info.sha!)
/// ```
///
/// The token goes to the endpoint's origin only: redirects to another host (a CDN) are never followed with
/// it, and `HEAD` stops at the first cross-origin redirect, because the Hub puts a file's commit, ETag and
/// size on that redirect (the protocol note, §1.7 and §9). Listings and info retry transient failures
/// (network, 5xx, 429 with `Retry-After`) with backoff on the injected clock.
package struct HubClient: Sendable {
    /// The Hub's base URL, without a trailing `/`.
    package let endpoint: URL
    let token: String?
    /// When true every call fails at once with `notCached`: nothing touches the network.
    package let isOffline: Bool
    /// Mirrors asked before the endpoint, in order (`HubMirror`); the endpoint is the last resort.
    package var mirrors: [HubMirror]
    let transport: any HTTPTransport
    let clock: any Clock<Duration>
    let retryPolicy: RetryPolicy
    let random: @Sendable () -> Double
    /// Told when a call waits before a retry, and when the wait ends (nil): a pull shows it in its progress.
    var waitObserver: (@Sendable (TransferWait?) -> Void)?
    /// Set for a pull a lock or signature holds: content-only mirrors answer listings once the endpoint could not
    /// be reached, and this records that they did.
    package internal(set) var discoveredListings: DiscoveredListings?
    /// The discovered mirrors that failed a file (``DiscoveredFailures``).
    package let discoveredFailures = DiscoveredFailures()
    /// Set when a refused connection to a local endpoint ends a call at once (see ``givingUpWhenRefused()``).
    var givesUpWhenRefused = false
    /// Spaces calls out when the Hub's rate limit runs low; shared by this client's copies.
    let pacer: RateLimitPacer
    /// Told of every wait of this client and its copies (retries, rate limits), beside the pull's own observer: a mirror
    /// counts its upstream's rate-limit waits.
    package var waitListener: (@Sendable (TransferWait) -> Void)?

    /// Responses to API calls larger than this are refused (a tree page of 1000 entries is about 300 KB).
    static let maximumResponseBytes = 64 << 20
    static let maximumRedirects = 20
    /// How API calls are retried unless a caller says otherwise: six attempts with the engine's backoff.
    package static let defaultRetryPolicy = RetryPolicy(maxAttempts: 6)

    /// A client for the Hub at `endpoint`, sending `token` there only; `offline` answers from the cache alone;
    /// `mirrors` are asked first, in order.
    package init(endpoint: URL, token: String? = nil, mirrors: [HubMirror] = [], offline: Bool = false) {
        self.init(
            endpoint: endpoint, token: token, mirrors: mirrors, offline: offline, transport: DefaultTransport.shared)
    }

    /// A client for the Hub at `endpoint` over `transport`, with the clock, retries and jitter given.
    package init(
        endpoint: URL,
        token: String? = nil,
        mirrors: [HubMirror] = [],
        offline: Bool = false,
        transport: any HTTPTransport,
        clock: any Clock<Duration> = ContinuousClock(),
        retryPolicy: RetryPolicy = HubClient.defaultRetryPolicy,
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) {
        var base = endpoint.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        self.endpoint = URL(string: base) ?? endpoint
        self.token = token
        self.mirrors = mirrors
        self.isOffline = offline
        self.transport = transport
        self.clock = clock
        self.retryPolicy = retryPolicy
        self.random = random
        pacer = RateLimitPacer(clock: clock, longestWait: retryPolicy.maxRetryAfter)
    }

    /// A client for `HF_ENDPOINT`, the token Python would use, and `HF_HUB_OFFLINE`. The implicit token is
    /// sent only where `HubEnvironment.token(for:)` allows (https, or http on this machine);
    /// an explicit one (`HubEnvironment.explicitToken`) always goes to the endpoint.
    package init(environment: HubEnvironment) throws {
        try self.init(environment: environment, transport: DefaultTransport.shared)
    }

    /// A client for the Hub `environment` names, over `transport`.
    package init(
        environment: HubEnvironment, transport: any HTTPTransport,
        clock: any Clock<Duration> = ContinuousClock(), retryPolicy: RetryPolicy = HubClient.defaultRetryPolicy
    ) throws {
        guard let endpoint = URL(string: environment.endpoint), endpoint.host != nil,
            ["http", "https"].contains(endpoint.scheme?.lowercased() ?? "")
        else {
            throw ModelDepotError(
                .invalidURL,
                "The Hub endpoint '\(environment.endpoint)' (HF_ENDPOINT) is not a Hub URL; give one like https://huggingface.co or http://mirror:8080.",
                remedy: .fixEndpoint)
        }
        var token = environment.token(for: endpoint)
        // The implicit token goes over plain http only to an endpoint on this machine: through a proxy the request
        // leaves it (to the proxy, and the proxy's own loopback), so it goes without. `--token` is the user's word.
        if environment.explicitToken == nil, endpoint.scheme?.lowercased() == "http",
            transport.proxy(for: endpoint) != nil
        {
            token = nil
        }
        self.init(
            endpoint: endpoint, token: token, mirrors: try environment.mirrors(), offline: environment.isOffline,
            transport: transport, clock: clock, retryPolicy: retryPolicy)
    }

    // MARK: - URLs

    /// `{endpoint}/{prefix}{repo}/resolve/{revision}/{path}`, the revision encoded with no safe characters.
    package func resolveURL(_ repo: RepoID, type: RepoType = .model, revision: String, path: RepoFilePath) -> URL {
        url(
            "/\(type.urlPrefix)\(repo)/resolve/\(HubEncoding.encodeSegment(revision))/\(HubEncoding.encodePath(path.value))"
        )
    }

    func apiURL(_ repo: RepoID, type: RepoType, _ rest: String = "") -> URL {
        url("/api/\(type.apiSegment)/\(repo)\(rest)")
    }

    func url(_ path: String) -> URL {
        URL(string: endpoint.absoluteString + path)!
    }

    /// The same client, telling `observer` when a call waits before a retry (and nil when the wait ends).
    package func observingWaits(_ observer: @escaping @Sendable (TransferWait?) -> Void) -> HubClient {
        var client = self
        client.waitObserver = observer
        return client
    }

    /// The same client, except that a call to an endpoint on this machine or its local network that is refused
    /// (nothing listens there) fails at once instead of after every retry. For a caller with an answer at hand
    /// (a complete cached snapshot): six attempts cost ~6 s for a server that is simply not running.
    package func givingUpWhenRefused() -> HubClient {
        var client = self
        client.givesUpWhenRefused = endpoint.isOnLocalNetwork
        return client
    }

    /// The `Authorization` header, for the endpoint's own origin only.
    /// The headers that authenticate a request to `url`: the token, only when `url` is on the endpoint's origin
    /// (scheme, host and port); none anywhere else.
    package func authorization(for url: URL) -> [(name: String, value: String)] {
        guard let token, url.hasSameOrigin(as: endpoint) else { return [] }
        return [("Authorization", "Bearer \(token)")]
    }

    // MARK: - API calls

    /// Info at `revision` (the default branch when nil). `filesMetadata` asks for sizes and LFS hashes.
    package func repoInfo(
        _ repo: RepoID, type: RepoType = .model, revision: String? = nil, filesMetadata: Bool = false
    ) async throws -> RepoInfo {
        if !mirrors.isEmpty {
            return try await failingOver {
                try await $0.repoInfo(repo, type: type, revision: revision, filesMetadata: filesMetadata)
            }
        }
        let revisionPart = revision.map { "/revision/\(HubEncoding.encodeSegment($0))" } ?? ""
        let query = filesMetadata ? "?blobs=true" : ""
        let (body, _) = try await getWithRetries(apiURL(repo, type: type, revisionPart + query))
        return try decode(RepoInfo.self, from: body, what: "the info of \(repo)")
    }

    /// The commits that lead to `revision`, newest first (the first page the Hub sends: up to 50 commits).
    package func listCommits(_ repo: RepoID, type: RepoType = .model, revision: String) async throws -> [RepoCommit] {
        if !mirrors.isEmpty {
            return try await failingOver { try await $0.listCommits(repo, type: type, revision: revision) }
        }
        let (body, _) = try await getWithRetries(
            apiURL(repo, type: type, "/commits/\(HubEncoding.encodeSegment(revision))"))
        return try decode([RepoCommit].self, from: body, what: "the commits of \(repo)")
    }

    /// Every entry under `path` at `revision` (all pages), recursively by default.
    package func listFiles(
        _ repo: RepoID, type: RepoType = .model, revision: String, path: String? = nil, recursive: Bool = true
    ) async throws -> [RepoTreeEntry] {
        if !mirrors.isEmpty {
            return try await failingOver {
                try await $0.listFiles(repo, type: type, revision: revision, path: path, recursive: recursive)
            }
        }
        let subPath = path.map { "/" + HubEncoding.encodeSegment($0) } ?? ""
        var next: URL? = apiURL(
            repo, type: type,
            "/tree/\(HubEncoding.encodeSegment(revision))\(subPath)?recursive=\(recursive)&expand=false"
        )
        var entries: [RepoTreeEntry] = []
        var pages = 0
        while let page = next {
            pages += 1
            guard pages <= Self.maximumTreePages else {
                throw ModelDepotError(
                    .protocolViolation,
                    "\(endpoint) kept sending pages of \(repo)'s file list (over \(Self.maximumTreePages)); giving up.")
            }
            let (body, response) = try await getWithRetries(page)
            entries += try decode([RepoTreeEntry].self, from: body, what: "the file list of \(repo)")
            next = response.header("Link").flatMap { Self.nextLink(in: $0, relativeTo: page) }
            if let following = next, !Self.isSameOrigin(following, as: page) {
                // The link is the server's word only: followed blindly, a hostile or compromised Hub could send the
                // client (and its token) to any host, or to a scheme the HTTP stack treats as a local socket.
                throw ModelDepotError(
                    .protocolViolation,
                    "\(endpoint) sent the next page of \(repo)'s file list at \(following.absoluteString), which is not on the server that sent the list (\(page.scheme ?? "")://\(page.host ?? "")); refusing to follow it."
                )
            }
        }
        return entries
    }

    /// Repositories whose id contains `query`, optionally by `author`, at most `limit`.
    package func search(
        _ query: String?, author: String? = nil, type: RepoType = .model, limit: Int? = nil
    ) async throws -> [RepoInfo] {
        let body = try await searchAnswer(query, author: author, type: type, limit: limit)
        let found = try decode([RepoInfo].self, from: body, what: "search results")
        return limit.map { Array(found.prefix($0)) } ?? found
    }

    /// The search's answer as the Hub sent it (a JSON array): what a mirror passes on with every field intact.
    package func searchAnswer(_ query: String?, author: String?, type: RepoType, limit: Int?) async throws -> [UInt8] {
        var items: [URLQueryItem] = []
        if let query, !query.isEmpty { items.append(URLQueryItem(name: "search", value: query)) }
        if let author { items.append(URLQueryItem(name: "author", value: author)) }
        if let limit { items.append(URLQueryItem(name: "limit", value: String(limit))) }
        var components = URLComponents(string: endpoint.absoluteString + "/api/\(type.apiSegment)")!
        components.queryItems = items.isEmpty ? nil : items
        return try await getWithRetries(components.url!).0
    }

    /// The file's commit, ETag, size and content location, from a `HEAD` on its resolve URL.
    ///
    /// - Throws: `entryNotFound` when the file does not exist at `revision`; the other Hub errors as usual.
    package func fileMetadata(
        _ repo: RepoID, type: RepoType = .model, revision: String, path: RepoFilePath
    ) async throws -> HubFileMetadata {
        switch try await lookUpFile(repo, type: type, revision: revision, path: path) {
        case .found(let metadata): return metadata
        case .missing(_, let error): throw error
        }
    }

    /// The first `count` bytes of a file at `revision` (fewer when it is shorter), from a `Range` request on its
    /// resolve URL; redirects are followed to a CDN, which never sees the token. A server that ignores the range
    /// and sends the whole file is read only that far.
    ///
    /// - Throws: `entryNotFound` when the file does not exist; the other Hub errors as usual.
    package func firstBytes(
        _ repo: RepoID, type: RepoType = .model, revision: String, path: RepoFilePath, count: Int
    ) async throws -> [UInt8] {
        try await bytes(repo, type: type, revision: revision, path: path, offset: 0, count: count).bytes
    }

    /// `count` bytes of a file from `offset` (a `Range` request, like `firstBytes(_:type:revision:path:count:)`)
    /// and the file's size from `Content-Range` when the server sends it. A server that ignores the range answers
    /// with the whole file: its first bytes serve an `offset` of 0; for another offset nothing is returned (and no
    /// size), since reading up to it could mean gigabytes.
    package func bytes(
        _ repo: RepoID, type: RepoType = .model, revision: String, path: RepoFilePath, offset: Int64, count: Int
    ) async throws -> (bytes: [UInt8], fileSize: Int64?) {
        if !mirrors.isEmpty {
            return try await failingOver {
                try await $0.bytes(repo, type: type, revision: revision, path: path, offset: offset, count: count)
            }
        }
        let resolve = resolveURL(repo, type: type, revision: revision, path: path)
        return try await withRetries {
            let range = [("Range", "bytes=\(offset)-\(offset + Int64(max(count, 1)) - 1)")]
            let (response, current) = try await HTTPExchange.following(
                redirectsFrom: resolve, limit: Self.maximumRedirects,
                send: { try await send(method: "GET", url: $0, extraHeaders: range) }, follows: { _, _ in true })
            guard (200..<300).contains(response.status) else {
                throw Self.hubError(
                    for: response, url: current,
                    body: try await Self.collect(response.body, limit: 1 << 16, url: current))
            }
            guard response.status == 206 else {
                return offset == 0 ? (try await response.body.prefix(limit: count), nil) : ([], nil)
            }
            // Content-Range: bytes first-last/size
            let header = response.header("Content-Range") ?? ""
            let size = header.split(separator: "/").last.flatMap { Int64($0) }
            let first = header.split(separator: " ").last?.split(separator: "-").first.flatMap { Int64($0) }
            guard first == offset else { return ([], size) }
            return (try await response.body.prefix(limit: count), size)
        }
    }

    /// A file that exists, or one the Hub says is missing (with the commit, so the cache can remember it).
    package enum FileLookup: Sendable {
        case found(HubFileMetadata)
        case missing(commit: String?, ModelDepotError)
    }

    package func lookUpFile(_ repo: RepoID, type: RepoType, revision: String, path: RepoFilePath) async throws
        -> FileLookup
    {
        if !mirrors.isEmpty {
            // A mirror that lacks the file may be behind: only the endpoint's "missing" is final.
            return try await failingOver { client in
                let lookup = try await client.lookUpFile(repo, type: type, revision: revision, path: path)
                if case .missing(_, let error) = lookup, !client.mirrors.isEmpty || client.endpoint != endpoint {
                    throw error
                }
                return lookup
            }
        }
        let resolve = resolveURL(repo, type: type, revision: revision, path: path)
        return try await withRetries {
            // Same origin: follow (renamed repos, /api/resolve-cache/…). Elsewhere (a CDN): the metadata is on
            // the redirect itself, and the CDN must not see the token.
            let (response, url) = try await HTTPExchange.following(
                redirectsFrom: resolve, limit: Self.maximumRedirects,
                send: { try await send(method: "HEAD", url: $0) }, follows: { $1.hasSameOrigin(as: $0) })
            if let next = try HTTPExchange.redirectTarget(of: response, from: url) {
                return .found(try Self.metadata(from: response, location: next, url: resolve, isRedirect: true))
            }
            guard (200..<300).contains(response.status) else {
                let error = Self.hubError(for: response, url: url, body: [])
                if error.code == .entryNotFound {
                    // The header names a folder of the cache (`.no_exist/<commit>/`): only a commit id may.
                    let commit = response.header("X-Repo-Commit")?.lowercased()
                    return .missing(commit: commit.flatMap { HubEncoding.isGitID($0) ? $0 : nil }, error)
                }
                throw error
            }
            return .found(try Self.metadata(from: response, location: url, url: resolve, isRedirect: false))
        }
    }

    static func metadata(from response: TransportResponse, location: URL, url: URL, isRedirect: Bool) throws
        -> HubFileMetadata
    {
        guard let commit = response.header("X-Repo-Commit"), HubEncoding.isGitID(commit.lowercased()) else {
            throw ModelDepotError(
                .protocolViolation,
                "\(url) sent no X-Repo-Commit header: the endpoint is not Hub-compatible. Check the endpoint (HF_ENDPOINT)."
            )
        }
        guard let rawETag = response.header("X-Linked-Etag") ?? response.header("ETag") else {
            throw ModelDepotError(
                .protocolViolation,
                "\(url) sent no ETag: the endpoint is not Hub-compatible. Check the endpoint (HF_ENDPOINT).")
        }
        let etag = HubEncoding.normalizeETag(rawETag)
        guard HubEncoding.isSafeBlobName(etag) else {
            throw ModelDepotError(
                .protocolViolation, "\(url) sent the ETag '\(rawETag)', which cannot name a file in the cache.")
        }
        let sizeHeader = response.header("X-Linked-Size") ?? (isRedirect ? nil : response.header("Content-Length"))
        return HubFileMetadata(
            commit: commit.lowercased(), etag: etag, size: sizeHeader.flatMap { Int64($0) }, location: location)
    }
}
