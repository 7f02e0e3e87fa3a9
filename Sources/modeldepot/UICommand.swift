#if os(Linux) || os(macOS)
    import ArgumentParser
    import Foundation
    import Logging
    import ModelDepot
    import ModelDepotEmbeddings
    import ModelDepotHTTP
    import ModelDepotInference
    import ModelDepotPlatform
    import ModelDepotScreens
    import ModelDepotWeb
    import Synchronization

    struct UICommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "ui",
            abstract:
                "Open ModelDepot's screens in a browser: models, downloads, storage, settings, chat, embeddings and transcription.",
            discussion: """
                Prints a URL with a one-time token: opening it starts a session (a cookie) and the token stops \
                working, so the link in your history opens nothing. Only this machine can connect unless --host says \
                otherwise, and then --token-file is required: its token opens the app as often as needed.
                """)

        @Option(help: "The address to listen on (default 127.0.0.1; anything else needs --token-file).")
        var host = "127.0.0.1"

        @Option(
            help:
                "Seconds a stop (SIGTERM, Ctrl-C) waits for responses in flight before it closes their connections; the process exits within 2 s after. Event streams end at once; a second signal exits at once."
        )
        var drainTimeout: Double = 10

        @Option(help: "The port (default 0: any free port).")
        var port = 0

        @Flag(help: "Open the URL in the default browser.")
        var open = false

        @Option(help: "A file holding the token that opens the app (required with a --host beyond this machine).")
        var tokenFile: String?

        @Flag(
            help: """
                Serve generated models from an embedded Hub instead (no network needed): one to download, one already \
                here, one damaged, one for the onboarding page. The cache is a new temporary folder unless \
                --cache-dir says otherwise.
                """)
        var demo = false

        @Option(help: "The Chat playground's model: an OpenAI-compatible API base URL, e.g. http://127.0.0.1:8080/v1.")
        var chatEndpoint: String?

        @Option(
            help: "The Chat playground's model: a downloaded GGUF catalog model, served on 127.0.0.1 while ui runs.")
        var chatLocal: String?

        @Option(help: "The model id the chat endpoint is asked for (default: the server's choice).")
        var chatModel: String?

        @Option(
            help: """
                The Embeddings playground's model: a downloaded BERT-family catalog model run in this process \
                (all-minilm-l6-v2, gte-small). Without it, the chat model's server embeds.
                """)
        var embedLocal: String?

        @Option(
            help: "The Transcribe screen's model: an OpenAI-compatible API base URL, e.g. http://127.0.0.1:8000/v1.")
        var transcribeEndpoint: String?

        @Option(
            help:
                "The Transcribe screen's model: a downloaded CTranslate2 Whisper model (whisper-tiny-en-ct2…), served by faster-whisper-server while ui runs."
        )
        var transcribeLocal: String?

        @OptionGroup var hub: HubOptions

        @OptionGroup var catalogOptions: CatalogOptions

        @OptionGroup var tlsOptions: TLSOptions

        static let loopbackHosts: Set<String> = ["127.0.0.1", "localhost", "::1"]

        func validate() throws {
            guard (0...65535).contains(port) else { throw ValidationError("--port must be between 0 and 65535.") }
            guard drainTimeout >= 0, drainTimeout.isFinite else {
                throw ValidationError("--drain-timeout must be a number of seconds, 0 or more.")
            }
            guard chatEndpoint == nil || chatLocal == nil else {
                throw ValidationError("Give --chat-endpoint URL or --chat-local NAME, not both.")
            }
            guard transcribeEndpoint == nil || transcribeLocal == nil else {
                throw ValidationError("Give --transcribe-endpoint URL or --transcribe-local NAME, not both.")
            }
            if let transcribeEndpoint {
                guard let url = URL(string: transcribeEndpoint),
                    ["http", "https"].contains(url.scheme?.lowercased() ?? "")
                else {
                    throw ValidationError(
                        "--transcribe-endpoint '\(transcribeEndpoint)' is not a URL; give one like http://127.0.0.1:8000/v1."
                    )
                }
            }
            if let chatEndpoint {
                guard let url = URL(string: chatEndpoint), ["http", "https"].contains(url.scheme?.lowercased() ?? "")
                else {
                    throw ValidationError(
                        "--chat-endpoint '\(chatEndpoint)' is not a URL; give one like http://127.0.0.1:8080/v1.")
                }
            }
            guard Self.loopbackHosts.contains(host) || tokenFile != nil else {
                throw ValidationError(
                    "--host \(host) lets other machines connect: give --token-file FILE with a secret token too.")
            }
        }

        /// What a server named by `--chat-endpoint` or `--transcribe-endpoint` is sent: `MODELDEPOT_API_KEY`, else
        /// the Hub token ui was given (`--endpoint`, `--token`) where that token may go, never the process's own.
        func serverCredentials(for url: URL) -> InferenceCredentials {
            InferenceCredentials.resolve(
                for: url, apiKey: ProcessInfo.processInfo.environment["MODELDEPOT_API_KEY"],
                environment: hub.environment)
        }

        func run() async throws {
            // The runtimes of loaded models are stopped (SIGTERM, SIGKILL after a grace period, waited for) however
            // `serve` ends, a failed start included; a `defer` could not wait.
            var runtimes: ModelRuntimes?
            do {
                try await serve(&runtimes)
            } catch {
                await runtimes?.unloadAll()
                throw error
            }
            await runtimes?.unloadAll()
        }

        private func serve(_ made: inout ModelRuntimes?) async throws {
            LoggingSystem.bootstrap { label in
                var handler = StreamLogHandler.standardError(label: label)
                handler.logLevel = .warning
                return handler
            }
            let token = try tokenFile.map(ServeCommand.readToken)
            let tls = try tlsOptions.serverTLS()
            let configuration: ModelManager.Configuration
            let cache: HubCache
            let catalog: ModelCatalog
            var demoHub: UIDemo?
            if demo {
                let workspace = FileManager.default.temporaryDirectory
                    .appendingPathComponent("modeldepot-ui-demo-\(UUID().uuidString.prefix(8))")
                cache =
                    hub.cacheOptions.cacheDir == nil
                    ? HubCache(root: workspace.appendingPathComponent("cache")) : hub.cache
                let started = try await UIDemo.start(workspace: workspace, cache: cache)
                demoHub = started
                var demoConfiguration = ModelManager.Configuration(endpoint: started.endpoint, cache: cache)
                // The embedded Hub is this process's own, on loopback: never through a proxy.
                demoConfiguration.transport = DefaultTransport.shared(for: .direct)
                configuration = demoConfiguration
                catalog = started.catalog
                StandardStreams.error(
                    Data(
                        "demo Hub at \(started.endpoint.absoluteString): demo-chat and demo-llama to download, demo-embed here, demo-damaged damaged, demo-voice for /onboarding/demo-voice; cache \(cache.root.path)\n"
                            .utf8))
            } else {
                configuration = try hub.networkConfiguration()
                cache = hub.cache
                catalog = try catalogOptions.load()
            }
            defer { demoHub?.stop() }
            let manager = try ModelManager(configuration: configuration)
            let downloads = ModelDownloads(manager: manager, catalog: catalog)
            if demo {
                // Slow enough to watch the bar and try Pause, Resume and Cancel (48 MiB in about 12 s); the Downloads
                // page shows the limit and lifts it.
                await downloads.setBandwidthLimit(bytesPerSecond: UIDemo.bandwidthLimit)
            }
            var app = WebApp(
                downloads: downloads, session: UISession(fixedToken: token), offline: manager.pull.hub.isOffline,
                tokenOrigin: demo ? .none : hub.environment.tokenOrigin)
            app.tls = tls
            // Load and Unload on the pages: the local servers for GGUF chat and CTranslate2 Whisper, sentence
            // encoders in this process; all stopped when ui stops.
            let cacheForRuntimes = manager.cache
            let runtimes = ModelRuntimes(
                launcher: ExitCleanedLauncher(
                    base: LocalRuntimeLauncher(
                        catalog: catalog, cache: cacheForRuntimes,
                        encoder: { entry in
                            if let reason = SentenceEmbedder.unsupportedReason(for: entry) {
                                throw ModelDepotError(
                                    .unavailable, "\(entry.name) cannot run in this process: \(reason).")
                            }
                            // Reading and widening its weights is disk and CPU work: off the cooperative pool.
                            return InProcessEncoder(
                                sentenceEmbedder: try await BlockingWork.run {
                                    try SentenceEmbedder(entry, in: manager)
                                })
                        })))
            app.runtimes = runtimes
            made = runtimes
            if let chatEndpoint, let url = URL(string: chatEndpoint) {
                let provider = try OpenAICompatibleProvider(
                    baseURL: url, model: chatModel, credentials: serverCredentials(for: url))
                app.chat = ChatPlayground(
                    provider: provider, source: url.absoluteString + (chatModel.map { ", model \($0)" } ?? ""))
            }
            if let transcribeEndpoint, let url = URL(string: transcribeEndpoint) {
                app.transcribe = TranscribePlayground(
                    transcriber: try OpenAICompatibleTranscriber(
                        baseURL: url, model: "whisper-1", credentials: serverCredentials(for: url)),
                    source: url.absoluteString)
            }
            // --chat-local and friends: loaded now (a failure stops ui, with the reason) and selected first; the
            // playgrounds still offer every other downloaded model.
            for (kind, name, flag) in [
                (PlaygroundKind.chat, chatLocal, "--chat-local"), (.embeddings, embedLocal, "--embed-local"),
                (.transcribe, transcribeLocal, "--transcribe-local"),
            ] {
                guard let name else { continue }
                guard let entry = catalog.entry(named: name) else {
                    throw ValidationError("\(flag) \(name) is not in the catalog; `modeldepot catalog` lists it.")
                }
                guard kind.serves(entry) else {
                    throw ValidationError(
                        "\(flag) \(name) cannot be used for \(kind.rawValue) here: \(Self.unusable(entry, for: kind))")
                }
                StandardStreams.error(Data("Loading \(name)…\n".utf8))
                try await runtimes.load(entry, ignoringMemory: true)
                app.preferred[kind] = name
                // A chat server that also embeds serves the Embeddings page too, unless --embed-local says otherwise.
                if kind == .chat, embedLocal == nil, PlaygroundKind.embeddings.serves(entry) {
                    app.preferred[.embeddings] = name
                }
            }
            app.drainTimeout = .milliseconds(Int64(drainTimeout * 1000))
            app.onStuckStop = { ExitCleanup.exit(0) }
            SecondSignal.exitsAtOnce()
            // The page --open writes goes when ui does, however it ends.
            let page = Mutex<URL?>(nil)
            let removePage: @Sendable () -> Void = {
                if let folder = page.withLock({ $0 })?.deletingLastPathComponent() {
                    try? FileManager.default.removeItem(at: folder)
                }
            }
            let pageCleanup = ExitCleanup.register(removePage)
            defer {
                removePage()
                ExitCleanup.unregister(pageCleanup)
            }
            try await app.run(host: host, port: port) { url in
                let once = token == nil ? "the link works once; " : ""
                StandardStreams.output(Data("ModelDepot is at \(url.absoluteString)\n(\(once)Ctrl-C stops it)\n".utf8))
                if open { page.withLock { $0 = Self.openInBrowser(url) } }
            }
        }

        /// Why `entry` cannot serve playground `kind` here.
        static func unusable(_ entry: CatalogEntry, for kind: PlaygroundKind) -> String {
            if case .failure(let reason) = RuntimeKind.serving(entry) { return "\(reason)." }
            return "it is a model for \(entry.capabilities.map(\.rawValue).joined(separator: ", "))."
        }

        /// Opens `url` in the browser without putting it on any command line (every local user reads those, in the
        /// process list): as Jupyter does, a page that redirects to it is written into a new folder only this user
        /// can enter, readable by this user alone (0600), and the browser is handed the page's path. The page is
        /// removed when `ui` exits (see `run`). `xdg-open` on Linux, `open` on macOS; a failure to start one is said, not fatal.
        /// Returns the page written, nil when none could be.
        static func openInBrowser(_ url: URL) -> URL? {
            #if os(macOS)
                let opener = "/usr/bin/open"
            #else
                let opener = "/usr/bin/xdg-open"
            #endif
            var page: URL?
            do {
                page = try launchPage(for: url)
                // The browser it may start is the person's, not a runtime: it stays when ui ends.
                _ = try ChildProcess(
                    executable: opener, arguments: [page!.absoluteString], output: "/dev/null", diesWithParent: false)
            } catch {
                StandardStreams.error(Data("cannot open a browser (\(opener)): open the URL above by hand\n".utf8))
            }
            return page
        }

        /// Writes the page that redirects to `url` (a `meta` refresh and a link; no script, as the app allows
        /// none) into a new private folder, and returns its file URL.
        static func launchPage(for url: URL) throws -> URL {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
                "modeldepot-ui-\(UUID().uuidString)", isDirectory: true)
            try FileManager.default.createDirectory(
                at: folder, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
            let target = url.absoluteString.replacingOccurrences(of: "&", with: "&amp;")
                .replacingOccurrences(of: "\"", with: "&quot;").replacingOccurrences(of: "<", with: "&lt;")
            let html = """
                <!DOCTYPE html>
                <html><head><meta charset="utf-8"><meta name="referrer" content="no-referrer">
                <meta http-equiv="refresh" content="0;url=\(target)"><title>ModelDepot</title></head>
                <body><p><a href="\(target)">Open ModelDepot</a></p></body></html>

                """
            let page = folder.appendingPathComponent("open.html")
            do {
                try AtomicFile.replace(Array(html.utf8), atPath: page.path, temporarySuffix: ".tmp", mode: 0o600)
            } catch {
                throw POSIXFailure.error(error.operation, errno: error.code)
            }
            return page
        }
    }

    /// A sentence encoder loaded in this process, as the runtime manager tracks it: no server, nothing to stop.
    struct InProcessEncoder: RunningModel {
        let sentenceEmbedder: SentenceEmbedder
        var embedder: (any TextEmbedder)? { sentenceEmbedder }
        var endpoint: URL? { nil }
        var isRunning: Bool { true }
        func lastLines() -> String { "" }
        func stop() async {}
    }
#endif
