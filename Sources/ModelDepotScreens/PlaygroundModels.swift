import Foundation
import ModelDepot
import ModelDepotInference

/// The models each playground can talk to, and the one a request picks: an endpoint given when the app started
/// (`--chat-endpoint URL`) and every downloaded catalog model a runtime here serves, loaded into it on first use
/// (one runtime per model however many pages ask). The pages' selectors are ``choices(_:selecting:)``.
public struct PlaygroundModels: Sendable {
    /// The id of the endpoint given at start in a selector (a catalog name never starts with `@`).
    public static let endpointID = "@endpoint"

    public let downloads: ModelDownloads
    /// The runtimes models are loaded into; nil: only endpoints.
    public let runtimes: ModelRuntimes?
    /// The endpoints given at start, one a playground.
    public var chatEndpoint: ChatPlayground?
    public var embeddingsEndpoint: EmbeddingsPlayground?
    public var transcribeEndpoint: TranscribePlayground?
    /// The model a playground selects when the page names none (`--chat-local NAME`); else the endpoint, else the
    /// first loaded model, else the first downloaded one.
    public var preferred: [PlaygroundKind: String] = [:]

    public init(downloads: ModelDownloads, runtimes: ModelRuntimes?) {
        self.downloads = downloads
        self.runtimes = runtimes
    }

    /// The selector of playground `kind`: the endpoint, then the catalog's models of that kind that a runtime
    /// here serves and that are downloaded (loaded ones first), with `selecting` chosen when it is one of them.
    public func choices(_ kind: PlaygroundKind, selecting: String? = nil) async -> PlaygroundChoices {
        var choices: [PlaygroundChoices.Choice] = []
        if let source = endpointSource(kind) {
            choices.append(.init(id: Self.endpointID, label: source, state: "endpoint", detail: ""))
        }
        var waiting = 0
        if let runtimes {
            let loaded = Dictionary(uniqueKeysWithValues: await runtimes.loaded.map { ($0.name, $0) })
            var local: [PlaygroundChoices.Choice] = []
            for entry in downloads.catalog.models where kind.serves(entry) {
                guard downloaded(entry) else {
                    waiting += 1
                    continue
                }
                let state: String
                var detail = ""
                switch loaded[entry.name]?.state {
                case .ready?: state = "loaded"
                case .loading?: state = "loading"
                case .failed(let reason)?:
                    state = "failed"
                    detail = reason
                case nil:
                    state = "ready"
                    detail = await runtimes.memoryFit(entry).map { "Loading it \($0.summary)." } ?? ""
                }
                local.append(.init(id: entry.name, label: entry.name, state: state, detail: detail))
            }
            choices += local.filter { $0.state == "loaded" } + local.filter { $0.state != "loaded" }
        }
        let wanted = selecting ?? preferredModel(kind)
        let selected =
            choices.first { $0.id == wanted }?.id ?? choices.first { $0.state == "endpoint" }?.id
            ?? choices.first { $0.state == "loaded" }?.id ?? choices.first?.id
        return PlaygroundChoices(
            kind: kind, choices: choices, selected: selected,
            waitingText: waiting == 0
                ? nil
                : "\(waiting == 1 ? "1 more model" : "\(waiting) more models") of this kind can be used here once downloaded.",
            emptyMessage: choices.isEmpty ? PlaygroundChoices.empty(kind) : nil)
    }

    /// The chat playground over `model` (a catalog name, ``endpointID``, or nil for the page's default), loading
    /// the model first when it is not loaded.
    ///
    /// - Throws: `invalidArgument` for a name that is not a chat model here, `incompleteSnapshot` when it is not
    ///   downloaded, what loading throws, and `unavailable` when nothing is there to chat with.
    public func chat(_ model: String?) async throws -> ChatPlayground {
        if let endpoint = chatEndpoint, Self.isEndpoint(model, preferred: preferredModel(.chat)) { return endpoint }
        let (entry, running, use) = try await load(model, for: .chat)
        guard let endpoint = running.endpoint else {
            throw ModelDepotError(.unavailable, "\(entry.name)'s runtime has no endpoint to chat with.")
        }
        var playground = ChatPlayground(
            provider: try OpenAICompatibleProvider(
                baseURL: endpoint, model: entry.name, transport: OpenAICompatibleProvider.localTransport),
            source: "\(entry.name), loaded on this machine")
        playground.use = use
        return playground
    }

    /// The embeddings playground over `model`: an encoder in this process, or a server that embeds.
    public func embeddings(_ model: String?) async throws -> EmbeddingsPlayground {
        if Self.isEndpoint(model, preferred: preferredModel(.embeddings)) {
            if let endpoint = embeddingsEndpoint { return endpoint }
            if let chat = chatEndpoint { return EmbeddingsPlayground(embedder: chat.provider, source: chat.source) }
        }
        let (entry, running, use) = try await load(model, for: .embeddings)
        var playground: EmbeddingsPlayground
        if let embedder = running.embedder {
            playground = EmbeddingsPlayground(embedder: embedder, source: "\(entry.name), in this process")
        } else if let endpoint = running.endpoint {
            playground = EmbeddingsPlayground(
                embedder: try OpenAICompatibleProvider(
                    baseURL: endpoint, model: entry.name, transport: OpenAICompatibleProvider.localTransport),
                source: "\(entry.name), loaded on this machine")
        } else {
            throw ModelDepotError(.unavailable, "\(entry.name)'s runtime neither embeds here nor has an endpoint.")
        }
        playground.use = use
        return playground
    }

    /// The transcribe playground over `model`.
    public func transcribe(_ model: String?) async throws -> TranscribePlayground {
        if let endpoint = transcribeEndpoint, Self.isEndpoint(model, preferred: preferredModel(.transcribe)) {
            return endpoint
        }
        let (entry, running, use) = try await load(model, for: .transcribe)
        guard let endpoint = running.endpoint else {
            throw ModelDepotError(.unavailable, "\(entry.name)'s runtime has no endpoint to transcribe with.")
        }
        var playground = TranscribePlayground(
            transcriber: try OpenAICompatibleTranscriber(
                baseURL: endpoint, model: entry.name, traits: .fasterWhisperServer,
                transport: OpenAICompatibleProvider.localTransport),
            source: "\(entry.name), loaded on this machine")
        playground.use = use
        return playground
    }

    /// The model `kind` prefers, when the catalog has it and this playground can use it.
    private func preferredModel(_ kind: PlaygroundKind) -> String? {
        guard let name = preferred[kind], let entry = downloads.catalog.entry(named: name), kind.serves(entry) else {
            return nil
        }
        return name
    }

    private func endpointSource(_ kind: PlaygroundKind) -> String? {
        switch kind {
        case .chat: chatEndpoint?.source
        case .embeddings: embeddingsEndpoint?.source ?? chatEndpoint?.source
        case .transcribe: transcribeEndpoint?.source
        }
    }

    /// Whether a request naming `model` means the endpoint: it says so, or names nothing and no model is preferred.
    private static func isEndpoint(_ model: String?, preferred: String?) -> Bool {
        model == endpointID || ((model ?? "").isEmpty && preferred == nil)
    }

    private func downloaded(_ entry: CatalogEntry) -> Bool {
        (try? downloads.manager.readiness(of: entry))?.readiness.isLoadable == true
    }

    /// `model` loaded (or the playground's default when nil), with a use of it begun: the caller holds it while the
    /// model works for it.
    private func load(_ model: String?, for kind: PlaygroundKind) async throws -> (
        CatalogEntry, any RunningModel, RuntimeUse
    ) {
        guard let runtimes else { throw ModelDepotError(.noPlaygroundModel, PlaygroundChoices.empty(kind)) }
        var name = model.flatMap { $0.isEmpty ? nil : $0 } ?? preferredModel(kind)
        if name == nil { name = await choices(kind).selected }
        guard let name, name != Self.endpointID else {
            throw ModelDepotError(.noPlaygroundModel, PlaygroundChoices.empty(kind))
        }
        guard let entry = downloads.catalog.entry(named: name), kind.serves(entry) else {
            throw ModelDepotError(
                .invalidArgument, "'\(name.prefix(200))' is not a model the \(kind.rawValue) playground can use here.")
        }
        guard downloaded(entry) else {
            throw ModelDepotError(
                .incompleteSnapshot, "\(entry.name) is not downloaded here: download it first, then use it.",
                remedy: .downloadFirst)
        }
        let running = try await runtimes.load(entry)
        return (entry, running, await runtimes.use(entry.name))
    }
}

/// A playground's model selector.
public struct PlaygroundChoices: Sendable, Equatable, Encodable {
    public struct Choice: Sendable, Equatable, Encodable {
        /// A catalog name, or ``PlaygroundModels/endpointID``.
        public var id: String
        public var label: String
        /// `endpoint`, `loaded`, `loading`, `ready` (downloaded, loaded on first use) or `failed`.
        public var state: String
        /// The memory estimate of a model not loaded yet, or why its runtime failed.
        public var detail: String
    }

    public var kind: PlaygroundKind
    public var choices: [Choice]
    /// The id chosen; nil when there is none.
    public var selected: String?
    /// How many more models of this kind would be offered once downloaded.
    public var waitingText: String?
    /// What to do when nothing can be chosen.
    public var emptyMessage: String?

    static func empty(_ kind: PlaygroundKind) -> String {
        switch kind {
        case .chat:
            "No chat model yet: download a GGUF chat model on the Models page and press Use, or start `modeldepot ui` with --chat-endpoint URL (an OpenAI-compatible server)."
        case .embeddings:
            "No embedding model yet: download one on the Models page (all-minilm-l6-v2 runs in this app) and press Use, or start `modeldepot ui` with --chat-endpoint URL of a server that embeds."
        case .transcribe:
            "No transcription model yet: download a Whisper model on the Models page (whisper-tiny-en-ct2) and press Use, or start `modeldepot ui` with --transcribe-endpoint URL."
        }
    }
}

extension ModelDepotError.Code {
    /// A playground has no model to use: nothing downloaded that a runtime here serves, and no endpoint given.
    public static let noPlaygroundModel = Self("noPlaygroundModel", category: .other)
}
