import Foundation
import ModelDepotCore
import ModelDepotTransfer
import Synchronization

/// Talks to one OCI registry as the distribution specification describes: manifests and blobs by digest, tags, and
/// the three ways of being let in — anonymously, with HTTP Basic, and with the token flow (a `401` whose
/// `WWW-Authenticate: Bearer realm=…,service=…,scope=…` names where to get a token for the scope, asked with the
/// credential when there is one).
///
/// Credentials and tokens go to the registry's own origin only (and the credential to the realm it names); a
/// redirect to blob storage elsewhere is followed without them.
public final class RegistryClient: Sendable {
    /// `https://host:port` (or http for a registry on this machine or `--plain-http`).
    public let registry: URL
    let credential: RegistryCredential?
    let transport: any HTTPTransport
    let retryPolicy: RetryPolicy
    let clock: any Clock<Duration>
    /// Tokens from the realm, by scope; and whether the registry asked for Basic.
    private let state = Mutex<(tokens: [String: String], basic: Bool)>(([:], false))

    /// The most bytes a manifest or a config may have: anything larger is not one (distribution refuses 4 MiB too).
    public static let maximumManifestBytes = 4 << 20
    /// The most redirects followed for one request.
    static let maximumRedirects = 5

    /// A client for `registry`, sending `credential` there only.
    public convenience init(registry: URL, credential: RegistryCredential?, retryPolicy: RetryPolicy = .default) {
        self.init(
            registry: registry, credential: credential, transport: DefaultTransport.shared, retryPolicy: retryPolicy)
    }

    /// A client for `registry` over `transport`, with the clock given.
    package init(
        registry: URL, credential: RegistryCredential?, transport: any HTTPTransport,
        retryPolicy: RetryPolicy = .default, clock: any Clock<Duration> = ContinuousClock()
    ) {
        self.registry = registry
        self.credential = credential
        self.transport = transport
        self.retryPolicy = retryPolicy
        self.clock = clock
    }

    /// The scope of pulls from `repository`, and of pushes to it.
    public static func pullScope(_ repository: String) -> String { "repository:\(repository):pull" }
    public static func pushScope(_ repository: String) -> String { "repository:\(repository):pull,push" }

    // MARK: - Requests

    /// The `Authorization` a request to the registry carries for `scope`, if any.
    func authorization(scope: String) -> String? {
        let (tokens, basic) = state.withLock { ($0.tokens, $0.basic) }
        if let token = tokens[scope] { return "Bearer \(token)" }
        if basic, let header = credential?.basicHeader { return header }
        if case .bearer(let token) = credential { return "Bearer \(token)" }
        return nil
    }

    /// The headers a download of a blob of `repository` sends to the registry (the engine keeps them on its origin).
    public func downloadHeaders(repository: String) -> [(name: String, value: String)] {
        authorization(scope: Self.pullScope(repository)).map { [("Authorization", $0)] } ?? []
    }

    /// One request to the registry, authenticated for `scope`: sent, and when the registry answers `401` with a
    /// challenge, authenticated as it asks and sent once more. Redirects are followed for GET and HEAD, the
    /// credential kept on the registry's origin. Transient failures (network, 5xx, 429) are retried when
    /// `retrying`.
    package func send(
        _ method: String, _ url: URL, headers: [(name: String, value: String)] = [], body: [UInt8]? = nil,
        scope: String, retrying: Bool = true
    ) async throws -> TransportResponse {
        let attempt: () async throws -> TransportResponse = { [self] in
            var (answered, from) = try await sendOnce(method, url, headers: headers, body: body, scope: scope)
            // Only the registry's own challenge is answered: blob storage a redirect led to may not ask for the
            // registry's credential.
            if answered.status == 401, from.hasSameOrigin(as: registry),
                let challenge = answered.header("WWW-Authenticate").flatMap(RegistryChallenge.init(header:))
            {
                _ = try? await answered.body.collect(limit: 64 << 10, from: url)
                try await authenticate(challenge, scope: scope)
                (answered, from) = try await sendOnce(method, url, headers: headers, body: body, scope: scope)
            }
            if answered.status >= 500 || answered.status == 429 {
                let text = (try? await answered.body.collect(limit: 64 << 10, from: url)) ?? []
                throw ModelDepotError(
                    HTTPExchange.code(for: answered.status),
                    "\(registry.host ?? "the registry") answered \(method) \(url.path) with HTTP \(answered.status)\(Self.detail(text)).",
                    retryAfter: answered.retryAfter)
            }
            return answered
        }
        guard retrying else { return try await attempt() }
        return try await retryPolicy.run(clock: EngineClock(clock), random: { Double.random(in: 0..<1) }, attempt)
    }

    /// One request (its redirects followed for GET and HEAD); the answer and the URL that gave it.
    private func sendOnce(
        _ method: String, _ url: URL, headers: [(name: String, value: String)], body: [UInt8]?, scope: String
    ) async throws -> (TransportResponse, URL) {
        let authorization = authorization(scope: scope)
        let send: (URL) async throws -> TransportResponse = { [self] target in
            var request = TransportRequest(method: method, url: target, headers: headers, body: body)
            // The registry's credential never leaves its origin: blob storage a redirect leads to gets none.
            if let authorization, target.hasSameOrigin(as: registry) {
                request.headers.append(("Authorization", authorization))
            }
            return try await transport.send(request)
        }
        guard method == "GET" || method == "HEAD" else { return (try await send(url), url) }
        let (response, from) = try await HTTPExchange.following(
            redirectsFrom: url, limit: Self.maximumRedirects, send: send)
        return (response, from)
    }

    /// Answers a challenge: Basic needs the credential; Bearer gets a token for `scope` from the realm.
    func authenticate(_ challenge: RegistryChallenge, scope: String) async throws {
        let host = registry.host ?? "the registry"
        switch challenge.scheme {
        case .basic:
            guard credential?.basicHeader != nil, !state.withLock({ $0.basic }) else {
                throw ModelDepotError(
                    .unauthorized,
                    credential == nil
                        ? "\(host) asks for a user name and password; log in (docker login or skopeo login write ~/.docker/config.json or auth.json; credential helpers, credsStore and credHelpers, are not read) or give --registry-token-file."
                        : "\(host) refused the credential given for it; check the user name and password (or token).")
            }
            state.withLock { $0.basic = true }
        case .bearer:
            if case .bearer = credential {
                throw ModelDepotError(
                    .unauthorized,
                    "\(host) refused the registry token given for it (--registry-token-file); get a fresh one.")
            }
            guard let realmText = challenge.realm, var components = URLComponents(string: realmText),
                let scheme = components.scheme?.lowercased(), ["http", "https"].contains(scheme)
            else {
                throw ModelDepotError(
                    .protocolViolation, "\(host) asked for a token without a usable realm ('\(challenge.realm ?? "")')."
                )
            }
            // A registry reached over https may not send its credential to a realm over plain http.
            if registry.scheme == "https", scheme != "https" {
                throw ModelDepotError(
                    .protocolViolation,
                    "\(host) asked for a token from \(realmText), which is not https; the credential is not sent there."
                )
            }
            var query = components.queryItems ?? []
            if let service = challenge.parameters["service"] {
                query.append(URLQueryItem(name: "service", value: service))
            }
            query.append(URLQueryItem(name: "scope", value: scope))
            components.queryItems = query
            guard let realm = components.url else {
                throw ModelDepotError(.protocolViolation, "\(host) named an unusable token realm '\(realmText)'.")
            }
            var headers: [(name: String, value: String)] = [("Accept", "application/json")]
            if let basic = credential?.basicHeader { headers.append(("Authorization", basic)) }
            let response = try await transport.send(TransportRequest(method: "GET", url: realm, headers: headers))
            let body = try await response.body.collect(limit: 1 << 20, from: realm)
            guard response.status == 200 else {
                throw ModelDepotError(
                    .unauthorized,
                    "\(realm.host ?? host) refused a token for \(scope) (HTTP \(response.status))\(Self.detail(body)); "
                        + (credential == nil
                            ? "log in (docker login / skopeo login) or give --registry-token-file."
                            : "check the credential for \(host)."))
            }
            struct TokenAnswer: Decodable {
                var token: String?
                /// OAuth 2's spelling, which some realms answer with instead.
                var accessToken: String?

                enum CodingKeys: String, CodingKey {
                    case token
                    case accessToken = "access_token"
                }
            }
            guard let answer = try? JSONDecoder().decode(TokenAnswer.self, from: Data(body)),
                let token = answer.token ?? answer.accessToken, !token.isEmpty
            else {
                throw ModelDepotError(
                    .protocolViolation, "\(realm.host ?? host) answered a token request without a token.")
            }
            state.withLock { $0.tokens[scope] = token }
        }
    }

    static func detail(_ body: [UInt8]) -> String {
        guard !body.isEmpty else { return "" }
        // The distribution specification's error body: {"errors":[{"code":…,"message":…}]}.
        struct Errors: Decodable {
            struct Entry: Decodable {
                var code: String?
                var message: String?
            }
            var errors: [Entry]
        }
        if let errors = try? JSONDecoder().decode(Errors.self, from: Data(body)), let first = errors.errors.first {
            return ": \([first.code, first.message].compactMap { $0 }.joined(separator: " "))"
        }
        return ": " + String(decoding: body.prefix(200), as: UTF8.self)
    }

    /// The URL of `path` under `/v2/`.
    func url(_ path: String) -> URL { URL(string: registry.absoluteString + "/v2/" + path)! }

    /// Throws what a failed answer means, named: `notFound`, `unauthorized`, or the registry's error.
    func failure(_ response: TransportResponse, _ what: String, url: URL) async -> ModelDepotError {
        let body = (try? await response.body.collect(limit: 64 << 10, from: url)) ?? []
        let host = registry.host ?? "the registry"
        switch response.status {
        case 401, 403:
            return ModelDepotError(
                .unauthorized,
                "\(host) refused \(what) (HTTP \(response.status))\(Self.detail(body)); "
                    + (credential == nil
                        ? "log in (docker login / skopeo login) or give --registry-token-file."
                        : "check that the credential may do this."))
        case 404:
            return ModelDepotError(.notFound, "\(host) has no \(what)\(Self.detail(body)).")
        default:
            return ModelDepotError(
                HTTPExchange.code(for: response.status),
                "\(host) answered \(what) with HTTP \(response.status)\(Self.detail(body)).")
        }
    }

    // MARK: - Reading

    /// A manifest as the registry sent it, checked: its digest is the one asked for (or the one the registry says,
    /// for a tag), it is at most 4 MiB.
    public struct FetchedManifest: Sendable {
        public var bytes: [UInt8]
        public var digest: OCIDigest
        public var mediaType: String
    }

    /// The manifest `reference` names (by tag or digest) in `repository`.
    ///
    /// - Throws: `notFound`; `integrityMismatch` when the bytes do not have the digest asked for or the digest the
    ///   registry announced (`Docker-Content-Digest`); `protocolViolation` past 4 MiB.
    public func manifest(_ repository: String, reference: String) async throws -> FetchedManifest {
        let url = url("\(repository)/manifests/\(reference)")
        let response = try await send(
            "GET", url, headers: [("Accept", OCIMediaType.acceptedManifests.joined(separator: ", "))],
            scope: Self.pullScope(repository))
        guard response.status == 200 else {
            throw await failure(response, "manifest \(repository):\(reference)", url: url)
        }
        let bytes = try await response.body.collect(limit: Self.maximumManifestBytes, from: url)
        let digest = OCIDigest(of: bytes)
        let host = registry.host ?? "the registry"
        if let asked = OCIDigest(reference), asked != digest {
            throw ModelDepotError(
                .checksumMismatch,
                "\(host) sent a manifest for \(repository)@\(asked) whose digest is \(digest); refusing it (the registry or something between is altering it)."
            )
        }
        if let announced = response.header("Docker-Content-Digest"), let said = OCIDigest(announced), said != digest {
            throw ModelDepotError(
                .checksumMismatch,
                "\(host) said the manifest of \(repository):\(reference) is \(said) but sent bytes whose digest is \(digest); refusing it."
            )
        }
        let mediaType =
            response.header("Content-Type").map { String($0.split(separator: ";").first ?? "") }
            ?? OCIMediaType.imageManifest
        return FetchedManifest(bytes: bytes, digest: digest, mediaType: mediaType)
    }

    /// A small blob (a config), read whole and checked against its digest.
    public func smallBlob(_ repository: String, _ descriptor: OCIDescriptor) async throws -> [UInt8] {
        guard descriptor.size <= Self.maximumManifestBytes else {
            throw ModelDepotError(
                .protocolViolation,
                "The config blob \(descriptor.digest) is \(descriptor.size) bytes; refusing more than 4 MiB.")
        }
        let url = blobURL(repository, descriptor.digest)
        let response = try await send("GET", url, scope: Self.pullScope(repository))
        guard response.status == 200 else { throw await failure(response, "blob \(descriptor.digest)", url: url) }
        let bytes = try await response.body.collect(limit: Self.maximumManifestBytes, from: url)
        guard Int64(bytes.count) == descriptor.size, OCIDigest(of: bytes) == descriptor.digest else {
            throw ModelDepotError(
                .checksumMismatch,
                "\(registry.host ?? "the registry") sent blob \(descriptor.digest) with other bytes (\(bytes.count) bytes, \(OCIDigest(of: bytes))); refusing it."
            )
        }
        return bytes
    }

    /// Where blob `digest` of `repository` is fetched.
    public func blobURL(_ repository: String, _ digest: OCIDigest) -> URL { url("\(repository)/blobs/\(digest)") }

    /// Whether the registry holds blob `digest` in `repository` (a HEAD, which also gets a token for pulls).
    public func hasBlob(_ repository: String, _ digest: OCIDigest, scope: String? = nil) async throws -> Bool {
        let url = blobURL(repository, digest)
        let response = try await send("HEAD", url, scope: scope ?? Self.pullScope(repository))
        switch response.status {
        case 200: return true
        case 404: return false
        default: throw await failure(response, "blob \(digest)", url: url)
        }
    }

    /// The tags of `repository`.
    public func tags(_ repository: String) async throws -> [String] {
        let url = url("\(repository)/tags/list")
        let response = try await send("GET", url, scope: Self.pullScope(repository))
        guard response.status == 200 else { throw await failure(response, "tag list of \(repository)", url: url) }
        struct Tags: Decodable { var tags: [String]? }
        let body = try await response.body.collect(limit: 4 << 20, from: url)
        return (try JSONDecoder().decode(Tags.self, from: Data(body))).tags ?? []
    }
}
