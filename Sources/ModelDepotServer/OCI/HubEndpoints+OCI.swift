import Foundation
import HTTPTypes
import Hummingbird
import ModelDepotCore
import ModelDepotHTTP
import ModelDepotOCI
import NIOCore

/// The read side of the OCI distribution API under `/v2/`, over the same repositories and blobs as the Hub's
/// routes: `skopeo`, `oras`, containerd/CRI-O and Kubernetes' ImageVolume pull a model as a ModelPack artifact.
///
/// An OCI name is lower case, so `acme/tiny-llm-gguf` names the served model whatever its case (`acme/Tiny-LLM-GGUF`);
/// a tag names a branch or tag (`main`); a digest names the manifest of one commit. Blobs are the served files
/// themselves (ranges, `sendfile`, pull-through), and the config. With a token, the mirror asks for it as registries
/// do (`WWW-Authenticate: Basic`): as the password of Basic credentials (any user name), or as a Bearer token.
extension HubEndpoints {
    /// Registers `/v2/` and everything under it on `group` (the `/v2` group of the router).
    func addRegistryRoutes(to group: RouterGroup<Context>, artifacts: ModelPackManifests) {
        let read: [HTTPRequest.Method] = [.get, .head]
        group.endpoint("/", read) { request, _ in await registryAnswer(request) { Self.registryJSON("{}") } }
        group.endpoint("/token", read) { request, _ in registryToken(request) }
        group.endpoint("/**", read) { request, context in
            try await registryAnswer(request) {
                try await registryRoute(request, context: context, artifacts: artifacts)
            }
        }
    }

    /// `answer`, once the request carries the mirror's token (when it has one); else the registry's `401`.
    private func registryAnswer(_ request: Request, _ answer: () async throws -> Response) async rethrows -> Response {
        guard let token, !Self.registryAuthorized(request, token: token) else {
            var response = try await answer()
            response.headers[HTTPField.Name("Docker-Distribution-API-Version")!] = "registry/2.0"
            return response
        }
        var response = Self.registryError(
            .unauthorized, "UNAUTHORIZED",
            "This mirror needs its token: as the password (any user name) or as a Bearer token.")
        // The distribution token flow, which every registry client speaks (some only it): the realm is this mirror's
        // own `/v2/token`, on the host the client asked, which hands the token to whoever shows it as a password.
        response.headers[.wwwAuthenticate] =
            #"Bearer realm="\#(Self.realm(request, scheme: scheme))",service="modeldepot""#
        return response
    }

    /// Where the token flow's realm is: `/v2/token` on the host the client asked for (a name of letters, digits,
    /// dots, dashes, colons and brackets only, else the loopback address), over https when the mirror serves TLS or a
    /// proxy in front of it says the client came by https (`X-Forwarded-Proto`), so the token never travels in clear.
    static func realm(_ request: Request, scheme: String) -> String {
        var host = request.head.authority ?? ""
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:[]")
        if host.isEmpty || host.count > 255 || !host.allSatisfy(allowed.contains) { host = "127.0.0.1" }
        let forwarded = request.headers[HTTPField.Name("X-Forwarded-Proto")!]?.lowercased()
        return "\(forwarded == "https" ? "https" : scheme)://\(host)/v2/token"
    }

    /// `/v2/token`: the mirror's token, for a client that shows it (as the password of Basic credentials, any user
    /// name): what the token flow's realm answers. Anyone else gets a Basic challenge.
    private func registryToken(_ request: Request) -> Response {
        guard let token else { return Self.json(["token": "anonymous", "access_token": "anonymous"]) }
        guard Self.registryAuthorized(request, token: token) else {
            var response = Self.registryError(
                .unauthorized, "UNAUTHORIZED", "Give the mirror's token as the password (any user name).")
            response.headers[.wwwAuthenticate] = #"Basic realm="modeldepot""#
            return response
        }
        return Self.json(["token": token, "access_token": token, "expires_in": 3600])
    }

    /// Whether the request carries `token` as a Bearer token or as the password of Basic credentials (compared in
    /// constant time).
    static func registryAuthorized(_ request: Request, token: String) -> Bool {
        if BearerTokenMiddleware.authorized(request, token: token) { return true }
        guard let header = request.headers[.authorization], header.hasPrefix("Basic "),
            let decoded = Data(base64Encoded: String(header.dropFirst(6))).flatMap({ String(data: $0, encoding: .utf8) }
            ),
            let colon = decoded.firstIndex(of: ":")
        else { return false }
        return BearerTokenMiddleware.equal(String(decoded[decoded.index(after: colon)...]), token)
    }

    /// `/v2/<name>/manifests/<reference>`, `/v2/<name>/blobs/<digest>`, `/v2/<name>/tags/list`.
    private func registryRoute(_ request: Request, context: Context, artifacts: ModelPackManifests) async throws
        -> Response
    {
        let path = String(request.uri.path.dropFirst("/v2/".count))
        if path.hasSuffix("/tags/list") {
            let name = String(path.dropLast("/tags/list".count))
            guard let id = try await registryRepository(name) else { return Self.nameUnknown(name) }
            guard let snapshot = try? await source.snapshot(type: .model, id: id, revision: nil) else {
                return Self.nameUnknown(name)
            }
            let tags = snapshot.branches.filter(OCIReference.isTag).sorted()
            return Self.json(["name": name, "tags": tags])
        }
        for kind in ["/manifests/", "/blobs/"] {
            guard let split = path.range(of: kind, options: .backwards) else { continue }
            let name = String(path[..<split.lowerBound])
            let reference = String(path[split.upperBound...])
            guard let id = try await registryRepository(name) else { return Self.nameUnknown(name) }
            if kind == "/blobs/" {
                guard let digest = OCIDigest(reference) else {
                    return Self.registryError(.badRequest, "DIGEST_INVALID", "'\(reference)' is not a sha256 digest.")
                }
                return try await registryBlob(id, digest, request: request, context: context, artifacts: artifacts)
            }
            return try await registryManifest(id, name: name, reference, request: request, artifacts: artifacts)
        }
        return Self.registryError(.notFound, "UNSUPPORTED", "This mirror answers manifests, blobs and tag lists.")
    }

    /// The served model an OCI name stands for: the one whose id, lower-cased, is the name (OCI names are lower
    /// case); else the name as an id (a pull-through mirror may find it upstream).
    private func registryRepository(_ name: String) async throws -> RepoID? {
        guard OCIReference.isRepositoryName(name), let asNamed = try? RepoID(name) else { return nil }
        // The id as written first (one lookup); the listing of every repository only for one spelled otherwise.
        if (try? await source.snapshot(type: .model, id: asNamed, revision: nil)) != nil { return asNamed }
        let repositories = try await BlockingWork.run { [source] in try source.repositories() }
        for (type, id) in repositories where type == .model && id.description.lowercased() == name { return id }
        return asNamed
    }

    private func registryManifest(
        _ id: RepoID, name: String, _ reference: String, request: Request, artifacts: ModelPackManifests
    ) async throws -> Response {
        let built: ModelPackManifests.Built
        if let digest = OCIDigest(reference) {
            if let known = artifacts.remembered(id, holding: digest), known.digest == digest {
                built = known
            } else if let snapshot = try? await source.snapshot(type: .model, id: id, revision: nil),
                case let made = try await artifacts.artifact(of: snapshot), made.digest == digest
            {
                built = made
            } else {
                return Self.registryError(.notFound, "MANIFEST_UNKNOWN", "No manifest of \(name) has digest \(digest).")
            }
        } else {
            guard OCIReference.isTag(reference) else {
                return Self.registryError(.badRequest, "TAG_INVALID", "'\(reference)' is not a tag.")
            }
            let snapshot: RepoSnapshot?
            do {
                snapshot = try await source.snapshot(type: .model, id: id, revision: reference)
            } catch let error as HubServerError where error.status == 404 {
                snapshot = nil
            }
            guard let snapshot else {
                return Self.registryError(.notFound, "MANIFEST_UNKNOWN", "\(name) has no branch or tag '\(reference)'.")
            }
            built = try await artifacts.artifact(of: snapshot)
        }
        var headers = HTTPFields()
        headers[.contentType] = OCIMediaType.imageManifest
        headers[.contentLength] = "\(built.manifest.count)"
        headers[HTTPField.Name("Docker-Content-Digest")!] = built.digest.description
        headers[.eTag] = "\"\(built.digest)\""
        headers[.cacheControl] = cacheControl(revision: OCIDigest(reference) != nil ? built.snapshot.commit : nil)
        let body =
            request.method == .head ? ResponseBody() : ResponseBody(byteBuffer: ByteBuffer(bytes: built.manifest))
        return Response(status: .ok, headers: headers, body: body)
    }

    private func registryBlob(
        _ id: RepoID, _ digest: OCIDigest, request: Request, context: Context, artifacts: ModelPackManifests
    ) async throws -> Response {
        var built = artifacts.remembered(id, holding: digest)
        if built == nil, let snapshot = try? await source.snapshot(type: .model, id: id, revision: nil) {
            let made = try await artifacts.artifact(of: snapshot)
            if made.configDigest == digest || made.layers[digest] != nil { built = made }
        }
        guard let built else {
            return Self.registryError(.notFound, "BLOB_UNKNOWN", "No blob of \(id) has digest \(digest).")
        }
        if built.configDigest == digest {
            var headers = HTTPFields()
            headers[.contentType] = OCIMediaType.modelConfig
            headers[.contentLength] = "\(built.config.count)"
            headers[HTTPField.Name("Docker-Content-Digest")!] = digest.description
            let body =
                request.method == .head ? ResponseBody() : ResponseBody(byteBuffer: ByteBuffer(bytes: built.config))
            return Response(status: .ok, headers: headers, body: body)
        }
        var (response, _) = try await fileResponse(built.layers[digest]!, of: built.snapshot, request, context)
        response.headers[.contentType] = "application/octet-stream"
        response.headers[HTTPField.Name("Docker-Content-Digest")!] = digest.description
        response.headers[.cacheControl] = cacheControl(revision: built.snapshot.commit)
        return response
    }

    static func nameUnknown(_ name: String) -> Response {
        registryError(.notFound, "NAME_UNKNOWN", "This mirror serves no model named \(name.prefix(200)).")
    }

    /// The distribution specification's error body: `{"errors":[{"code":…,"message":…}]}`.
    static func registryError(_ status: HTTPResponse.Status, _ code: String, _ message: String) -> Response {
        var response = json(["errors": [["code": code, "message": message]]])
        response.status = status
        return response
    }

    static func registryJSON(_ text: String) -> Response { Self.text(text, contentType: "application/json") }
}
