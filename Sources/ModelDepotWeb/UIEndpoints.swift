import Foundation
import HTTPTypes
import Hummingbird
import Logging
import ModelDepot
import ModelDepotHTTP
import ModelDepotInference
import ModelDepotScreens
import NIOCore

/// What the web app answers: its pages, the JSON API under `/api/ui/` (the OpenAPI document describes it, and a
/// test holds the document to ``addRoutes(to:)``'s routes), live events, assets, and the session link.
struct UIEndpoints: Sendable {
    typealias Context = WebRequestContext

    let downloads: ModelDownloads
    let session: UISession
    let pages: UIPages
    let logger: Logger
    /// True when the Hub cannot be asked (HF_HUB_OFFLINE, `--offline`): pages say so.
    let offline: Bool
    /// Where the Hub client's token came from, for the Settings screen.
    let tokenOrigin: HubEnvironment.TokenOrigin
    /// The models the playgrounds choose among (endpoints given at start, and loaded or loadable models).
    let playgrounds: PlaygroundModels
    /// The open event streams, which end with their clients or the app.
    var streams = EventStreams()
    /// Whether the app serves TLS: the session cookie is then `Secure`.
    var servedOverTLS = false
    /// The runtimes the app loads models into; nil: this app loads none (the routes say so).
    var runtimes: ModelRuntimes? = nil
    /// Lets one bill of materials be made at a time.
    let billsOfMaterials = BillOfMaterialsGate()

    /// The most a change may carry: a small JSON object.
    static let bodyLimit = 64 << 10
    /// The most a recording to transcribe may carry: base64 in JSON, a third larger than the audio.
    static let transcribeBodyLimit = TranscribePlayground.maximumAudioBytes / 3 * 4 + (64 << 10)
    /// The actions a `POST /api/ui/models/{name}/{action}` may name (using a model is the app's business).
    static let postableActions: [ModelAction] = [.download, .pause, .resume, .cancel, .retry, .repair]

    /// Registers the pages and the API; the router's middleware (guard, headers, errors) is added before.
    func addRoutes(to router: Router<Context>) {
        let read: [HTTPRequest.Method] = [.get, .head]
        router.endpoint("/", read) { _, _ in UIResponses.redirect("/models") }
        router.endpoint("/session", read) { request, context in openSession(request, port: context.localPort) }
        router.endpoint("/assets/:name", read) { _, context in
            guard let name = context.parameters.get("name"), UIAssets.known.contains(name),
                let response = UIResponses.asset(name)
            else { throw HTTPError(.notFound) }
            return response
        }
        addPages(to: router)
        let api = router.group("/api/ui")
        api.endpoint("/openapi.json", read) { _, _ in try Self.openAPIDocument() }
        api.endpoint("/models", read) { request, _ in
            try UIResponses.json(await ModelsScreen.load(downloads, filter: try Self.filter(request)))
        }
        api.endpoint("/models/:name", read) { _, context in
            try UIResponses.json(try await ModelDetailScreen.load(try Self.name(context), downloads: downloads))
        }
        // The model's bill of materials (issue 66), from its cached bytes hashed now; a download, not a page. GET
        // only (a HEAD would hash the model for nothing), one at a time.
        api.endpoint("/models/:name/bom", [.get]) { _, context in
            let name = try Self.name(context)
            guard let entry = downloads.catalog.entry(named: name) else { throw HTTPError(.notFound) }
            guard billsOfMaterials.tryEnter() else {
                return UIResponses.error(
                    429, "Another bill of materials is being made (each hashes a whole model); try again shortly.")
            }
            defer { billsOfMaterials.leave() }
            let request = entry.snapshotRequest
            let bill = try await downloads.manager.billOfMaterials(
                for: request.repo, type: request.type, revision: request.revision, selection: request.selection)
            return UIResponses.billOfMaterials(bill, fileName: name)
        }
        for action in Self.postableActions {
            api.endpoint(RouterPath("/models/:name/\(action.rawValue)"), [.post], bodyLimit: Self.bodyLimit) {
                _, context, _ in
                try await downloads.perform(action, on: try Self.name(context))
                return try UIResponses.json(await DownloadsScreen.load(downloads))
            }
        }
        addRuntimeRoutes(to: api)
        api.endpoint("/downloads", read) { _, _ in try UIResponses.json(await DownloadsScreen.load(downloads)) }
        api.endpoint("/onboarding/:name", read) { _, context in
            try UIResponses.json(try await OnboardingScreen.load(try Self.name(context), downloads: downloads))
        }
        // GET only: a HEAD would start a stream nobody reads.
        api.endpoint("/events", [.get]) { _, _ in UIEvents.response(downloads, streams: streams) }
        api.endpoint("/bandwidth", [.put], bodyLimit: Self.bodyLimit) { _, _, body in
            await downloads.setBandwidthLimit(bytesPerSecond: try BandwidthForm.parse(Data(buffer: body)))
            return try UIResponses.json(await DownloadsScreen.load(downloads))
        }
        api.endpoint("/settings", read) { _, _ in
            try UIResponses.json(await SettingsScreen.load(downloads, tokenOrigin: tokenOrigin))
        }
        addStorage(to: api)
        addPlaygrounds(to: api)
    }

    private func addPages(to router: Router<Context>) {
        let read: [HTTPRequest.Method] = [.get, .head]
        router.endpoint("/models", read) { request, _ in
            let screen = await ModelsScreen.load(downloads, filter: try Self.filter(request))
            var loaded: LoadedModelsScreen?
            if let runtimes { loaded = await LoadedModelsScreen.load(runtimes, catalog: downloads.catalog) }
            return page(pages.models(screen, loaded: loaded, offline: offline))
        }
        router.endpoint("/models/:name", read) { _, context in
            let screen = try await ModelDetailScreen.load(try Self.name(context), downloads: downloads)
            var runtime: ModelRuntimeSummary?
            if let runtimes, let entry = downloads.catalog.entry(named: screen.name) {
                runtime = await ModelRuntimeSummary.load(entry, runtimes: runtimes)
            }
            return page(pages.model(screen, runtime: runtime, offline: offline))
        }
        router.endpoint("/downloads", read) { _, _ in
            page(
                pages.downloads(
                    await DownloadsScreen.load(downloads), title: DownloadsScreenStrings.english.title, offline: offline
                ))
        }
        router.endpoint("/onboarding/:name", read) { _, context in
            page(
                pages.onboarding(
                    try await OnboardingScreen.load(try Self.name(context), downloads: downloads), offline: offline))
        }
        router.endpoint("/storage", read) { _, _ in
            page(pages.storage(await StorageScreen.load(downloads.manager), offline: offline))
        }
        router.endpoint("/settings", read) { _, _ in
            page(pages.settings(await SettingsScreen.load(downloads, tokenOrigin: tokenOrigin), offline: offline))
        }
        for kind in PlaygroundKind.allCases {
            router.endpoint(RouterPath(kind.path), read) { request, _ in
                let choices = await playgrounds.choices(kind, selecting: Self.selected(request))
                return page(pages.playground(choices, offline: offline))
            }
        }
    }

    private func addStorage(to api: RouterGroup<Context>) {
        api.endpoint("/storage", [.get, .head]) { _, _ in
            try UIResponses.json(await StorageScreen.load(downloads.manager))
        }
        api.endpoint("/storage/prune-preview", [.post], bodyLimit: Self.bodyLimit) { _, _, body in
            let budget = try StorageForm.budget(Data(buffer: body))
            return try UIResponses.json(try await StorageScreen.prunePreview(downloads.manager, maxSize: budget))
        }
        api.endpoint("/storage/prune", [.post], bodyLimit: Self.bodyLimit) { _, _, body in
            let budget = try StorageForm.budget(Data(buffer: body))
            return try UIResponses.json(
                try await changingTheCache { try await StorageScreen.prune(downloads.manager, maxSize: budget) })
        }
        api.endpoint("/storage/prune-detached", [.post], bodyLimit: Self.bodyLimit) { _, _, _ in
            try UIResponses.json(
                try await changingTheCache { try await StorageScreen.pruneDetached(downloads.manager) })
        }
        for action in StorageScreen.Action.allCases {
            api.endpoint(RouterPath("/storage/\(action.rawValue)"), [.post], bodyLimit: Self.bodyLimit) { _, _, body in
                let (id, type) = try StorageForm.repository(Data(buffer: body))
                return try UIResponses.json(
                    try await changingTheCache {
                        try await StorageScreen.perform(action, on: id, type: type, downloads.manager)
                    })
            }
        }
    }

    private func addPlaygrounds(to api: RouterGroup<Context>) {
        api.endpoint("/playgrounds/:kind", [.get, .head]) { request, context in
            guard let kind = context.parameters.get("kind").flatMap(PlaygroundKind.init(rawValue:)) else {
                throw HTTPError(.notFound)
            }
            return try UIResponses.json(await playgrounds.choices(kind, selecting: Self.selected(request)))
        }
        api.endpoint("/chat", [.post], bodyLimit: Self.bodyLimit) { _, _, body in
            let chatRequest: ChatPlayground.Request
            do {
                chatRequest = try JSONDecoder().decode(ChatPlayground.Request.self, from: Data(buffer: body))
            } catch {
                throw ModelDepotError(
                    .invalidArgument,
                    #"Send {"messages": [{"role": "user", "content": "…"}], "system": "…", "preset": "default", "maxTokens": 256, "model": "…"}."#
                )
            }
            // Checked before a model is loaded for it.
            _ = try ChatPlayground.validated(chatRequest)
            let chat = try await playgrounds.chat(chatRequest.model)
            return ChatEvents.response(try chat.reply(to: chatRequest), streams: streams, logger: logger)
        }
        api.endpoint("/embeddings", [.post], bodyLimit: Self.bodyLimit) { _, _, body in
            guard let object = try? JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any],
                let sentences = object["sentences"] as? [String]
            else { throw ModelDepotError(.invalidArgument, #"Send {"sentences": ["…", "…"], "model": "…"}."#) }
            let embeddings = try await playgrounds.embeddings(object["model"] as? String)
            return try UIResponses.json(try await embeddings.compare(sentences))
        }
        api.endpoint("/transcribe", [.post], bodyLimit: Self.transcribeBodyLimit) { _, _, body in
            let upload: TranscribePlayground.Request
            do {
                upload = try JSONDecoder().decode(TranscribePlayground.Request.self, from: Data(buffer: body))
            } catch {
                throw ModelDepotError(
                    .invalidArgument,
                    #"Send {"name": "talk.wav", "audio": "<base64>", "language": "en", "translate": false, "wordTimestamps": false, "model": "…"}."#
                )
            }
            let transcribe = try await playgrounds.transcribe(upload.model)
            return try UIResponses.json(try await transcribe.transcribe(upload))
        }
    }

    /// The `model` a page's query selects.
    private static func selected(_ request: Request) -> String? {
        request.uri.queryParameters["model"].map(String.init).flatMap { $0.isEmpty ? nil : String($0.prefix(200)) }
    }

    /// `GET /session?token=…`: trades the launch link's one-time token for the session cookie.
    private func openSession(_ request: Request, port: Int) -> Response {
        guard let cookie = session.exchange(request.uri.queryParameters["token"].map(String.init) ?? "") else {
            return UIResponses.html(
                403,
                pages.notice(
                    "This link does not open ModelDepot",
                    "The link was already used or is wrong. Run `modeldepot ui` again and open the new link it prints."
                ))
        }
        var response = UIResponses.redirect("/models")
        response.headers[.setCookie] =
            "\(UISession.cookieName(port: port))=\(cookie); Path=/; HttpOnly; SameSite=Strict\(servedOverTLS ? "; Secure" : "")"
        return response
    }

    private func page(_ html: String) -> Response { UIResponses.html(200, html) }

    /// Runs a storage action and then tells the downloads the cache changed — also when it failed half-way (a
    /// repair that deleted a blob and could not fetch it again, a prune that stopped after some models).
    private func changingTheCache<T: Sendable>(_ action: () async throws -> T) async throws -> T {
        do {
            let outcome = try await action()
            await downloads.cacheChanged()
            return outcome
        } catch {
            await downloads.cacheChanged()
            throw error
        }
    }

    /// The loaded models, and loading or unloading one: `POST /models/{name}/load` (a downloaded model, into the
    /// runtime that serves it; `{"ignoringMemory": true}` loads one the estimate says does not fit) and `…/unload`.
    private func addRuntimeRoutes(to api: RouterGroup<Context>) {
        let runtimes = runtimes
        let downloads = downloads
        @Sendable func required() throws -> ModelRuntimes {
            guard let runtimes else {
                throw HTTPError(.conflict, message: "This app loads no models: start `modeldepot ui` to load them.")
            }
            return runtimes
        }
        api.endpoint("/runtimes", [.get, .head]) { _, _ in
            try UIResponses.json(await LoadedModelsScreen.load(try required(), catalog: downloads.catalog))
        }
        api.endpoint("/models/:name/load", [.post], bodyLimit: Self.bodyLimit) { _, context, body in
            let runtimes = try required()
            let entry = try downloads.catalogEntry(try Self.name(context))
            guard (try? downloads.manager.readiness(of: entry))?.readiness.isLoadable == true else {
                throw ModelDepotError(
                    .incompleteSnapshot, "\(entry.name) is not downloaded here: download it first, then load it.",
                    remedy: .downloadFirst)
            }
            let options = try? JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any]
            try await runtimes.load(entry, ignoringMemory: options?["ignoringMemory"] as? Bool ?? false)
            return try UIResponses.json(await LoadedModelsScreen.load(runtimes, catalog: downloads.catalog))
        }
        api.endpoint("/models/:name/unload", [.post], bodyLimit: Self.bodyLimit) { _, context, _ in
            let runtimes = try required()
            await runtimes.unload(try Self.name(context))
            return try UIResponses.json(await LoadedModelsScreen.load(runtimes, catalog: downloads.catalog))
        }
    }

    /// The model name in the path, percent-decoded.
    private static func name(_ context: Context) throws -> String {
        guard let name = context.parameters.decoded("name"), !name.isEmpty else { throw HTTPError(.notFound) }
        return name
    }

    private static func filter(_ request: Request) throws -> ModelsScreen.Filter {
        let query = request.uri.queryParameters
        return try ModelsScreen.Filter(
            capability: query["capability"].map(String.init), format: query["format"].map(String.init),
            search: query["q"].map(String.init), hub: query["hub"].map(String.init))
    }

    private static func openAPIDocument() throws -> Response {
        guard let url = Bundle.module.url(forResource: "openapi", withExtension: "json", subdirectory: "Resources"),
            let data = try? Data(contentsOf: url)
        else { return UIResponses.error(500, "The OpenAPI document is missing from the package's resources.") }
        return Response(
            status: .ok, headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }
}
