import Foundation
import HTTPTypes
import Hummingbird
import Logging
import ModelDepot
import ModelDepotScreens
import NIOCore
import Synchronization

/// Answers the web app's requests: the guard first (host, session, cross-site), then the route.
struct UIResponder: HTTPResponder {
    typealias Context = BasicRequestContext

    let downloads: ModelDownloads
    let session: UISession
    let pages: UIPages
    let guardian: RequestGuard
    /// The port the app listens on: the session cookie's name carries it (browsers share cookies across ports).
    let port: Int
    let logger: Logger
    /// True when the Hub cannot be asked (HF_HUB_OFFLINE, `--offline`): pages say so.
    let offline: Bool
    /// Where the Hub client's token came from, for the Settings screen.
    let tokenOrigin: HubEnvironment.TokenOrigin
    let chat: ChatPlayground?
    let embeddings: EmbeddingsPlayground?
    let transcribe: TranscribePlayground?
    /// The open event streams, which end with their clients or the app.
    var streams = EventStreams()

    /// Headers every answer carries: no inline script, no framing, no referrer, no sniffing, no caching.
    static let securityHeaders: HTTPFields = [
        HTTPField.Name("Content-Security-Policy")!:
            "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
        HTTPField.Name("X-Content-Type-Options")!: "nosniff",
        HTTPField.Name("Referrer-Policy")!: "no-referrer",
        HTTPField.Name("X-Frame-Options")!: "DENY",
        .cacheControl: "no-store",
    ]

    func respond(to request: Request, context: Context) async throws -> Response {
        var response = await answer(request)
        for field in Self.securityHeaders where response.headers[field.name] == nil { response.headers.append(field) }
        logger.info("\(request.method) \(request.uri.path) \(response.status.code)")
        return response
    }

    private func answer(_ request: Request) async -> Response {
        // The headers decide first (host, session, origin): a request refused by them is answered without its
        // body being read, and the connection is closed rather than left with the body still arriving.
        let refusal = guardian.check(
            method: request.method.rawValue, path: request.uri.path, host: request.head.authority,
            origin: request.headers[.origin], fetchSite: request.headers[HTTPField.Name("Sec-Fetch-Site")!],
            contentType: request.headers[.contentType],
            sessionOpen: session.admits(cookieHeader: request.headers[.cookie], port: port))
        if let refusal {
            var response = refused(refusal, path: request.uri.path)
            response.headers[.connection] = "close"
            return response
        }
        // Then the body, within its bound. A change is a small JSON object; a recording to transcribe is the one
        // large body (base64 in JSON, a third larger than the audio).
        var request = request
        let body: ByteBuffer
        let limit =
            request.uri.path == "/api/ui/transcribe"
            ? TranscribePlayground.maximumAudioBytes / 3 * 4 + (64 << 10) : 64 << 10
        do {
            body = try await request.collectBody(upTo: limit)
        } catch {
            var response = Self.error(
                413, "A request to this app may carry at most \(ByteFormat.string(Int64(limit))).")
            response.headers[.connection] = "close"
            return response
        }
        let route: UIRoute
        do {
            route = try UIRoute.parse(method: request.method.rawValue, path: request.uri.path)
        } catch .methodNotAllowed(let allowed) {
            var response = Self.error(405, "\(request.method) is not allowed here; use \(allowed).")
            response.headers[.allow] = allowed
            return response
        } catch {
            return request.uri.path.hasPrefix("/api/")
                ? Self.error(404, "No such API route: \(request.uri.path.prefix(200)).")
                : html(404, pages.notice("Not found", "There is no page here. The Models page lists every model."))
        }
        do {
            return try await serve(route, request, body: body)
        } catch let error as ModelDepotError {
            let status = error.code == .invalidArgument ? 400 : 409
            if request.uri.path.hasPrefix("/api/") { return Self.error(status, error.message) }
            return html(status == 400 ? 404 : 409, pages.notice("Cannot show this", error.message))
        } catch {
            return Self.error(500, "\(error)")
        }
    }

    private func serve(_ route: UIRoute, _ request: Request, body: ByteBuffer) async throws -> Response {
        let query = request.uri.queryParameters
        switch route {
        case .home:
            return Self.redirect("/models")
        case .session:
            guard let cookie = session.exchange(query["token"].map(String.init) ?? "") else {
                return html(
                    403,
                    pages.notice(
                        "This link does not open ModelDepot",
                        "The link was already used or is wrong. Run `modeldepot ui` again and open the new link it prints."
                    ))
            }
            var response = Self.redirect("/models")
            response.headers[.setCookie] =
                "\(UISession.cookieName(port: port))=\(cookie); Path=/; HttpOnly; SameSite=Strict"
            return response
        case .modelsPage:
            let filter = try ModelsScreen.Filter(
                capability: query["capability"].map(String.init), format: query["format"].map(String.init),
                search: query["q"].map(String.init), hub: query["hub"].map(String.init))
            return html(200, pages.models(await ModelsScreen.load(downloads, filter: filter), offline: offline))
        case .modelPage(let name):
            return html(
                200, pages.model(try await ModelDetailScreen.load(name, downloads: downloads), offline: offline))
        case .downloadsPage:
            return html(
                200,
                pages.downloads(
                    await DownloadsScreen.load(downloads), title: DownloadsScreenStrings.english.title, offline: offline
                ))
        case .onboardingPage(let name):
            return html(
                200, pages.onboarding(try await OnboardingScreen.load(name, downloads: downloads), offline: offline))
        case .storagePage:
            return html(200, pages.storage(await StorageScreen.load(downloads.manager), offline: offline))
        case .settingsPage:
            return html(
                200, pages.settings(await SettingsScreen.load(downloads, tokenOrigin: tokenOrigin), offline: offline))
        case .chatPage:
            return html(200, pages.chat(chat, offline: offline))
        case .transcribePage:
            return html(200, pages.transcribe(transcribe, offline: offline))
        case .embeddingsPage:
            return html(200, pages.embeddings(embeddings, offline: offline))
        case .asset(let name):
            guard let (data, type) = UIAssets.load(name) else { return Self.error(404, "No such asset.") }
            return Response(
                status: .ok, headers: [.contentType: type], body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
        case .apiModels:
            let filter = try ModelsScreen.Filter(
                capability: query["capability"].map(String.init), format: query["format"].map(String.init),
                search: query["q"].map(String.init), hub: query["hub"].map(String.init))
            return try Self.json(await ModelsScreen.load(downloads, filter: filter))
        case .apiModel(let name):
            return try Self.json(try await ModelDetailScreen.load(name, downloads: downloads))
        case .apiDownloads:
            return try Self.json(await DownloadsScreen.load(downloads))
        case .apiOnboarding(let name):
            return try Self.json(try await OnboardingScreen.load(name, downloads: downloads))
        case .apiEvents:
            return UIEvents.response(downloads, streams: streams)
        case .apiAction(let name, let action):
            try await downloads.perform(action, on: name)
            return try Self.json(await DownloadsScreen.load(downloads))
        case .apiBandwidth:
            let limit = try BandwidthForm.parse(Data(buffer: body))
            await downloads.setBandwidthLimit(bytesPerSecond: limit)
            return try Self.json(await DownloadsScreen.load(downloads))
        case .apiStorage:
            return try Self.json(await StorageScreen.load(downloads.manager))
        case .apiStorageAction(let action):
            let (id, type) = try StorageForm.repository(Data(buffer: body))
            return try Self.json(
                try await Self.changingTheCache(downloads) {
                    try await StorageScreen.perform(action, on: id, type: type, downloads.manager)
                })
        case .apiPrunePreview:
            let budget = try StorageForm.budget(Data(buffer: body))
            return try Self.json(try await StorageScreen.prunePreview(downloads.manager, maxSize: budget))
        case .apiPrune:
            let budget = try StorageForm.budget(Data(buffer: body))
            return try Self.json(
                try await Self.changingTheCache(downloads) {
                    try await StorageScreen.prune(downloads.manager, maxSize: budget)
                })
        case .apiPruneDetached:
            return try Self.json(
                try await Self.changingTheCache(downloads) { try await StorageScreen.pruneDetached(downloads.manager) })
        case .apiSettings:
            return try Self.json(await SettingsScreen.load(downloads, tokenOrigin: tokenOrigin))
        case .apiChat:
            guard let chat else { return Self.error(409, PlaygroundText.noChat) }
            let chatRequest: ChatPlayground.Request
            do {
                chatRequest = try JSONDecoder().decode(ChatPlayground.Request.self, from: Data(buffer: body))
            } catch {
                throw ModelDepotError(
                    .invalidArgument,
                    #"Send {"messages": [{"role": "user", "content": "…"}], "system": "…", "preset": "default", "maxTokens": 256}."#
                )
            }
            return ChatEvents.response(try chat.reply(to: chatRequest), streams: streams, logger: logger)
        case .apiEmbeddings:
            guard let embeddings else { return Self.error(409, PlaygroundText.noEmbeddings) }
            guard let object = try? JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any],
                let sentences = object["sentences"] as? [String]
            else { throw ModelDepotError(.invalidArgument, #"Send {"sentences": ["…", "…"]}."#) }
            return try Self.json(try await embeddings.compare(sentences))
        case .apiTranscribe:
            guard let transcribe else { return Self.error(409, PlaygroundText.noTranscriber) }
            let upload: TranscribePlayground.Request
            do {
                upload = try JSONDecoder().decode(TranscribePlayground.Request.self, from: Data(buffer: body))
            } catch {
                throw ModelDepotError(
                    .invalidArgument,
                    #"Send {"name": "talk.wav", "audio": "<base64>", "language": "en", "translate": false, "wordTimestamps": false}."#
                )
            }
            return try Self.json(try await transcribe.transcribe(upload))
        case .apiDocument:
            guard let url = Bundle.module.url(forResource: "openapi", withExtension: "json", subdirectory: "Resources"),
                let data = try? Data(contentsOf: url)
            else { return Self.error(500, "The OpenAPI document is missing from the package's resources.") }
            return Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
        }
    }

    private func refused(_ refusal: RequestGuard.Refusal, path: String) -> Response {
        switch refusal {
        case .foreignHost(let host):
            return Self.error(421, "This server does not answer for the host '\(host.prefix(100))'.")
        case .noSession:
            if path.hasPrefix("/api/") {
                return Self.error(401, "Open the link `modeldepot ui` printed first; it starts a session.")
            }
            return html(
                401,
                pages.notice(
                    "Open the link modeldepot printed",
                    "This page needs the one-time link `modeldepot ui` printed when it started (or --token-file's token)."
                ))
        case .crossSite(let what):
            return Self.error(403, "Refused a change requested from another site (\(what)).")
        case .notJSON:
            return Self.error(415, "Send changes as JSON (Content-Type: application/json).")
        }
    }

    private func html(_ status: Int, _ body: String) -> Response {
        Response(
            status: HTTPResponse.Status(code: status), headers: [.contentType: "text/html; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: body)))
    }

    static func redirect(_ location: String) -> Response {
        Response(status: .seeOther, headers: [.location: location])
    }

    /// Runs a storage action and then tells the downloads the cache changed — also when it failed half-way (a
    /// repair that deleted a blob and could not fetch it again, a prune that stopped after some models).
    static func changingTheCache<T: Sendable>(_ downloads: ModelDownloads, _ action: () async throws -> T)
        async throws -> T
    {
        do {
            let outcome = try await action()
            await downloads.cacheChanged()
            return outcome
        } catch {
            await downloads.cacheChanged()
            throw error
        }
    }

    static func json(_ value: some Encodable) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Response(
            status: .ok, headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: try encoder.encode(value))))
    }

    static func error(_ status: Int, _ message: String) -> Response {
        let data = (try? JSONEncoder().encode(["error": message])) ?? Data()
        return Response(
            status: HTTPResponse.Status(code: status), headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }
}

/// The body of `PUT /api/ui/bandwidth`: `{"bytesPerSecond": 20000000}`, or null / 0 for no limit.
enum BandwidthForm {
    static func parse(_ body: Data) throws -> Int64? {
        guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any],
            object.keys.contains("bytesPerSecond")
        else {
            throw ModelDepotError(
                .invalidArgument, #"Send {"bytesPerSecond": N} (bytes per second; null or 0 for no limit)."#)
        }
        switch object["bytesPerSecond"] {
        case is NSNull: return nil
        case let number as NSNumber:
            let value = number.doubleValue
            guard value.isFinite, value >= 0, value <= 1e13, value == value.rounded() else {
                throw ModelDepotError(
                    .invalidArgument, "bytesPerSecond must be a whole number from 0 to 10000000000000, or null.")
            }
            return value == 0 ? nil : Int64(value)
        default:
            throw ModelDepotError(.invalidArgument, "bytesPerSecond must be a number or null.")
        }
    }
}

/// The bodies of the Storage screen's calls: `{"id": "acme/chat", "type": "model"}` names a cached repository,
/// `{"maxBytes": 5000000000}` a budget to prune to.
enum StorageForm {
    static func repository(_ body: Data) throws -> (id: String, type: String) {
        guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any],
            let id = object["id"] as? String, !id.isEmpty
        else {
            throw ModelDepotError(
                .invalidArgument,
                #"Send {"id": "owner/name", "type": "model"} (type: model or dataset; model if left out)."#)
        }
        guard let type = (object["type"] ?? "model") as? String else {
            throw ModelDepotError(.invalidArgument, "type must be model or dataset.")
        }
        return (id, type)
    }

    static func budget(_ body: Data) throws -> Int64 {
        guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any],
            let number = object["maxBytes"] as? NSNumber
        else {
            throw ModelDepotError(.invalidArgument, #"Send {"maxBytes": N}: the size in bytes the cache may keep."#)
        }
        let value = number.doubleValue
        guard value.isFinite, value >= 0, value <= 1e15, value == value.rounded() else {
            throw ModelDepotError(.invalidArgument, "maxBytes must be a whole number of bytes from 0 to 10^15.")
        }
        return Int64(value)
    }
}
