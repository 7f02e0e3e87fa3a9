#if os(Linux) || os(macOS)
    import ArgumentParser
    import Foundation
    import ModelDepot
    import ModelDepotInference
    import Synchronization

    /// Where `chat` and `embed` get replies: a running OpenAI-compatible server, or a downloaded catalog model
    /// served locally for the length of the command.
    struct InferenceOptions: ParsableArguments {
        @Option(
            help:
                "An OpenAI-compatible API base URL, e.g. http://127.0.0.1:8080/v1 or https://router.huggingface.co/v1.")
        var endpoint: String?

        @Option(help: "A downloaded GGUF model from the catalog, served on 127.0.0.1 while the command runs.")
        var local: String?

        @Option(help: "The model id to ask for (default: the local model's name, else the server's choice).")
        var model: String?

        @Option(help: "The API key (default: MODELDEPOT_API_KEY; Hugging Face hosts use HF_TOKEN).")
        var apiKey: String?

        @Option(help: "The context length for --local (default: the model's, at most 4096).")
        var context: Int?

        @OptionGroup var cacheOptions: CacheOptions

        @OptionGroup var catalogOptions: CatalogOptions

        func validate() throws {
            guard (endpoint == nil) != (local == nil) else {
                throw ValidationError(
                    "Pass exactly one of --endpoint URL (a running server) or --local NAME (a downloaded model).")
            }
            if let context, context < 256 { throw ValidationError("--context must be at least 256.") }
        }

        /// The URL `--endpoint` names and the credentials it gets: `--api-key`, else `MODELDEPOT_API_KEY`, else the Hub
        /// token for Hugging Face hosts.
        static func endpoint(_ text: String, apiKey: String?) throws -> (URL, InferenceCredentials) {
            guard let url = URL(string: text) else {
                throw ModelDepotError(.invalidURL, "'\(text)' is not a URL; pass one like http://127.0.0.1:8080/v1.")
            }
            let key = apiKey ?? ProcessInfo.processInfo.environment["MODELDEPOT_API_KEY"]
            return (url, InferenceCredentials.resolve(for: url, apiKey: key, environment: HubEnvironment()))
        }

        /// Runs `body` with a provider; a local server started for it is stopped afterwards, whatever happens.
        func withProvider<T>(_ body: (OpenAICompatibleProvider) async throws -> T) async throws -> T {
            if let endpoint {
                let (url, credentials) = try Self.endpoint(endpoint, apiKey: apiKey)
                return try await body(OpenAICompatibleProvider(baseURL: url, model: model, credentials: credentials))
            }
            let name = local ?? ""
            let localModel = try LocalModel.resolve(name, catalog: catalogOptions.load(), cache: cacheOptions.cache)
            let contextLength = context ?? min(localModel.entry.contextLength ?? 4096, 4096)
            StandardStreams.error(Data("Starting a local server for \(name)…\n".utf8))
            let server = try await LocalModelServer.start(
                model: localModel.file, alias: name, contextLength: contextLength,
                records: RuntimeRecords(cache: cacheOptions.cache))
            // Whatever ends this process, the server must not outlive it.
            let cleanup = ExitCleanup.register { server.stopBeforeExit() }
            defer { ExitCleanup.unregister(cleanup) }
            do {
                let provider = try OpenAICompatibleProvider(
                    baseURL: server.baseURL, model: model ?? name, transport: OpenAICompatibleProvider.localTransport)
                let result = try await body(provider)
                await server.stop()
                return result
            } catch {
                await server.stop()
                throw error
            }
        }
    }

    /// Writes to standard error without buffering (status lines between streamed replies).
    func printStatus(_ text: String) {
        StandardStreams.error(Data((text + "\n").utf8))
    }

    /// Work to do before the process exits from a signal handler or `exit`: stopping child processes.
    enum ExitCleanup {
        private static let actions = Mutex<[Int: @Sendable () -> Void]>([:])
        private static let nextID = Atomic<Int>(0)

        static func register(_ action: @escaping @Sendable () -> Void) -> Int {
            let id = nextID.add(1, ordering: .relaxed).newValue
            actions.withLock { $0[id] = action }
            return id
        }

        static func unregister(_ id: Int) {
            _ = actions.withLock { $0.removeValue(forKey: id) }
        }

        /// Runs every registered action, then exits with `status`.
        ///
        /// An action may block for a moment (a local server is given up to two seconds to stop): whichever thread
        /// calls this, the process is ending and nothing waits for that thread any more.
        static func exit(_ status: Int32) -> Never {
            for action in actions.withLock({ Array($0.values) }) { action() }
            Foundation.exit(status)
        }
    }
#endif
