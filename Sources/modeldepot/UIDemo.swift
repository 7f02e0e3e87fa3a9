#if os(Linux) || os(macOS)
    import Foundation
    import Logging
    import ModelDepot
    import ModelDepotPlatform
    import ModelDepotServer
    import Synchronization

    /// `modeldepot ui --demo`: an embedded Hub on 127.0.0.1 with generated models in every state the screens show —
    /// one to download (rate-capped, so the bar can be watched, and one connection reset on purpose), one already
    /// here, one damaged on disk, a small one for the onboarding page. No network needed.
    struct UIDemo {
        let workspace: URL
        let endpoint: URL
        let catalog: ModelCatalog
        let cache: HubCache
        let serving: Task<Void, any Error>

        /// The demo's models: catalog name, repository, weights in MiB, capability, what it shows.
        static let models: [(name: String, repo: String, mebibytes: Int, capability: ModelCapability, about: String)] =
            [
                (
                    "demo-chat", "demo/chat", 48, .textGeneration,
                    "A chat model to download: watch the bar, pause, resume."
                ),
                ("demo-embed", "demo/embed", 2, .embeddings, "Already on this device: ready to use."),
                (
                    "demo-damaged", "demo/damaged", 4, .embeddings,
                    "Damaged on disk: Repair downloads the bad file again."
                ),
                (
                    "demo-voice", "demo/voice", 1, .transcription,
                    "Small; open /onboarding/demo-voice for the onboarding flow."
                ),
            ]

        /// The downloads' bandwidth limit in the demo: its 48 MiB model takes about 12 s, long enough to watch.
        static let bandwidthLimit: Int64 = 4 << 20

        /// Writes the repositories, starts the Hub, and brings the cache into the demo's state.
        static func start(workspace: URL, cache: HubCache) async throws -> UIDemo {
            var entries: [CatalogEntry] = []
            for model in models {
                let folder = workspace.appendingPathComponent("repos/\(model.repo)")
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                let weights = safetensors(payload: DemoCommand.sampleBytes(count: model.mebibytes << 20))
                try Data(weights).write(to: folder.appendingPathComponent("model.safetensors"))
                let config = Array(#"{"architectures": ["DemoModel"], "hidden_size": 64}"#.utf8)
                try Data(config).write(to: folder.appendingPathComponent("config.json"))
                entries.append(
                    CatalogEntry(
                        name: model.name, repo: try RepoID(model.repo), files: ["model.safetensors", "config.json"],
                        required: ["model.safetensors", "config.json"], format: .safetensors,
                        capabilities: [model.capability], sizeBytes: Int64(weights.count + config.count),
                        license: "apache-2.0", recommended: model.name == "demo-chat", description: model.about))
            }
            let catalog = try ModelCatalog(models: entries, presets: ["demo": entries.map(\.name)])
            var mirror = MirrorServer(
                roots: [workspace.appendingPathComponent("repos")], caches: [],
                stateFolder: workspace.appendingPathComponent("state"),
                logger: Logger(label: "demo", factory: { _ in SwiftLogNoOpLogHandler() }))
            // 16 MB/s per file body, and one connection dropped part-way: the engine recovers it.
            mirror.faults = try ServedFaults("reset=1x,rate=16MB")
            let port = try LoopbackPort.unused()
            let address = Mutex<URL?>(nil)
            let serving = Task {
                try await mirror.run(host: "127.0.0.1", port: port) { url in address.withLock { $0 = url } }
            }
            var waited = 0
            while address.withLock({ $0 }) == nil, waited < 200 {
                try await Task.sleep(for: .milliseconds(50))
                waited += 1
            }
            guard let endpoint = address.withLock({ $0 }) else {
                serving.cancel()
                throw ModelDepotError(.network, "The demo's embedded Hub did not start.")
            }
            // One model here, one damaged: pulled, then its weights cut in half.
            var configuration = ModelManager.Configuration(endpoint: endpoint, cache: cache)
            // The embedded Hub is this process's own, on loopback: never through a proxy.
            configuration.transport = DefaultTransport.shared(for: .direct)
            let manager = try ModelManager(configuration: configuration)
            for name in ["demo-embed", "demo-damaged"] {
                guard let entry = catalog.entry(named: name) else { continue }
                let snapshot = try await manager.download(entry).result()
                guard name == "demo-damaged" else { continue }
                let weights = snapshot.folder.appendingPathComponent("model.safetensors").resolvingSymlinksInPath()
                let handle = try FileHandle(forWritingTo: weights)
                try handle.truncate(atOffset: UInt64(1 << 20))
                try handle.close()
            }
            return UIDemo(workspace: workspace, endpoint: endpoint, catalog: catalog, cache: cache, serving: serving)
        }

        /// Stops the Hub and removes what the demo generated (the cache too when it is the demo's own).
        func stop() {
            serving.cancel()
            try? FileManager.default.removeItem(at: workspace)
        }

        /// A well-formed safetensors file holding `payload` as one U8 tensor, so the model pages show its header.
        static func safetensors(payload: [UInt8]) -> [UInt8] {
            var header = Array(
                #"{"weight":{"dtype":"U8","shape":[\#(payload.count)],"data_offsets":[0,\#(payload.count)]}}"#.utf8)
            while header.count % 8 != 0 { header.append(UInt8(ascii: " ")) }
            let length = UInt64(header.count)
            return (0..<8).map { UInt8(truncatingIfNeeded: length >> (8 * $0)) } + header + payload
        }
    }
#endif
