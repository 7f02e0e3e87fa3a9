import Foundation
import ModelDepotScreens

/// The web app's requests, parsed from method and path before anything runs: pages, the JSON API under
/// `/api/ui/`, live events, assets, and the session link.
enum UIRoute: Equatable, Sendable {
    case home
    case session
    case modelsPage
    case modelPage(String)
    case downloadsPage
    case onboardingPage(String)
    case storagePage
    case settingsPage
    case chatPage
    case embeddingsPage
    case transcribePage
    case asset(String)
    case apiModels
    case apiModel(String)
    case apiDownloads
    case apiOnboarding(String)
    case apiEvents
    case apiAction(String, ModelAction)
    case apiBandwidth
    case apiDocument
    case apiStorage
    case apiStorageAction(StorageScreen.Action)
    case apiPrunePreview
    case apiPrune
    case apiPruneDetached
    case apiSettings
    case apiChat
    case apiEmbeddings
    case apiTranscribe

    /// What went wrong with a request that names no route.
    enum Failure: Error, Equatable {
        case notFound
        case methodNotAllowed(allowed: String)
    }

    /// The actions a `POST /api/ui/models/{name}/{action}` may name (using a model is the app's business).
    static let postableActions: [ModelAction] = [.download, .pause, .resume, .cancel, .retry, .repair]

    /// Parses `method` and the percent-encoded `path`.
    static func parse(method: String, path: String) throws(Failure) -> UIRoute {
        let raw = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map(String.init)
        guard !raw.contains(where: { $0 == ".." || $0 == "." }) else { throw .notFound }
        let parts = raw.map { $0.removingPercentEncoding ?? $0 }
        let get = method == "GET" || method == "HEAD"
        func require(_ allowed: String, _ route: UIRoute) throws(Failure) -> UIRoute {
            let ok = allowed == "GET" ? get : method == allowed
            guard ok else { throw .methodNotAllowed(allowed: allowed == "GET" ? "GET, HEAD" : allowed) }
            return route
        }
        let name = parts.count > 1 ? parts[1] : ""
        switch (parts.first ?? "", parts.count) {
        case ("", 1): return try require("GET", .home)
        case ("session", 1): return try require("GET", .session)
        case ("models", 1): return try require("GET", .modelsPage)
        case ("models", 2) where !name.isEmpty: return try require("GET", .modelPage(name))
        case ("downloads", 1): return try require("GET", .downloadsPage)
        case ("onboarding", 2) where !name.isEmpty: return try require("GET", .onboardingPage(name))
        case ("storage", 1): return try require("GET", .storagePage)
        case ("settings", 1): return try require("GET", .settingsPage)
        case ("chat", 1): return try require("GET", .chatPage)
        case ("embeddings", 1): return try require("GET", .embeddingsPage)
        case ("transcribe", 1): return try require("GET", .transcribePage)
        case ("assets", 2) where UIAssets.known.contains(name): return try require("GET", .asset(name))
        case ("api", _) where parts.count >= 3 && parts[1] == "ui":
            return try parseAPI(Array(parts.dropFirst(2)), require)
        default: throw .notFound
        }
    }

    /// `/api/ui/…`, from the segments after `ui`.
    private static func parseAPI(
        _ parts: [String], _ require: (String, UIRoute) throws(Failure) -> UIRoute
    ) throws(Failure) -> UIRoute {
        let name = parts.count > 1 ? parts[1] : ""
        switch (parts[0], parts.count) {
        case ("models", 1): return try require("GET", .apiModels)
        case ("models", 2) where !name.isEmpty: return try require("GET", .apiModel(name))
        case ("models", 3) where !name.isEmpty:
            guard let action = ModelAction(rawValue: parts[2]), postableActions.contains(action) else {
                throw .notFound
            }
            return try require("POST", .apiAction(name, action))
        case ("downloads", 1): return try require("GET", .apiDownloads)
        case ("onboarding", 2) where !name.isEmpty: return try require("GET", .apiOnboarding(name))
        case ("events", 1): return try require("GET", .apiEvents)
        case ("bandwidth", 1): return try require("PUT", .apiBandwidth)
        case ("openapi.json", 1): return try require("GET", .apiDocument)
        case ("storage", 1): return try require("GET", .apiStorage)
        case ("storage", 2) where name == "prune-preview": return try require("POST", .apiPrunePreview)
        case ("storage", 2) where name == "prune": return try require("POST", .apiPrune)
        case ("storage", 2) where name == "prune-detached": return try require("POST", .apiPruneDetached)
        case ("storage", 2):
            guard let action = StorageScreen.Action(rawValue: name) else { throw .notFound }
            return try require("POST", .apiStorageAction(action))
        case ("settings", 1): return try require("GET", .apiSettings)
        case ("chat", 1): return try require("POST", .apiChat)
        case ("embeddings", 1): return try require("POST", .apiEmbeddings)
        case ("transcribe", 1): return try require("POST", .apiTranscribe)
        default: throw .notFound
        }
    }

    /// Every `/api/ui` route as the OpenAPI document writes it (method, path template), for the test that holds
    /// the document to the router.
    static let apiOperations: [(method: String, path: String)] =
        [
            ("get", "/api/ui/models"), ("get", "/api/ui/models/{name}"), ("get", "/api/ui/downloads"),
            ("get", "/api/ui/onboarding/{name}"), ("get", "/api/ui/events"), ("put", "/api/ui/bandwidth"),
            ("get", "/api/ui/openapi.json"), ("get", "/api/ui/storage"), ("post", "/api/ui/storage/prune-preview"),
            ("post", "/api/ui/storage/prune"), ("post", "/api/ui/storage/prune-detached"), ("get", "/api/ui/settings"),
            ("post", "/api/ui/chat"), ("post", "/api/ui/embeddings"), ("post", "/api/ui/transcribe"),
        ] + postableActions.map { ("post", "/api/ui/models/{name}/\($0.rawValue)") }
        + StorageScreen.Action.allCases.map { ("post", "/api/ui/storage/\($0.rawValue)") }
}
