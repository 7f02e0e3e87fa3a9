#if os(Linux) || os(macOS)
    import Foundation
    import ModelDepot
    import ModelDepotPlatform
    import Synchronization

    extension LocalModelServer: RunningModel {
        public var endpoint: URL? { baseURL }
        public func lastLines() -> String { logTail() }
        public var residentBytes: Int64? { ResidentMemory.of(processIdentifier) }
    }

    /// Starts the real runtimes for ``ModelRuntimes``: llama.cpp's server for a downloaded GGUF model,
    /// faster-whisper-server for a CTranslate2 Whisper model, each on a free loopback port and recorded so none
    /// outlives the process; `encoder` loads sentence encoders in this process (the app links
    /// `ModelDepotEmbeddings` for it; nil: it says which module to link).
    public struct LocalRuntimeLauncher: RuntimeLauncher {
        public let catalog: ModelCatalog
        public let cache: HubCache
        /// The largest context a chat server is started with (its KV cache grows with it).
        public var maximumContext = 4096
        public var encoder: (@Sendable (CatalogEntry) async throws -> any RunningModel)?
        /// The servers to run; nil: found as `--chat-local` finds them (``LocalServerRuntime/find(environment:)``).
        public var chatRuntime: LocalServerRuntime?
        public var transcriptionRuntime: TranscriptionServerRuntime?
        /// What ``installation(of:)`` found, asked once per kind (finding llama.cpp may run Python).
        private let installed = Found()

        private final class Found: Sendable {
            let byKind = Mutex<[RuntimeKind: Result<String, RuntimeUnavailable>]>([:])
            /// When a runtime was last found missing: looked for again after a while, not on every page.
            let missingSince = Mutex<[RuntimeKind: ContinuousClock.Instant]>([:])
        }

        public init(
            catalog: ModelCatalog, cache: HubCache,
            encoder: (@Sendable (CatalogEntry) async throws -> any RunningModel)? = nil
        ) {
            self.catalog = catalog
            self.cache = cache
            self.encoder = encoder
        }

        /// The weights on disk and, for llama.cpp, the KV cache at the context the server is started with (read from
        /// the GGUF header), against the memory available now.
        public func memoryFit(_ entry: CatalogEntry, kind: RuntimeKind) -> MemoryFit? {
            switch kind {
            case .llamaServer:
                guard let model = try? LocalModel.resolve(entry.name, catalog: catalog, cache: cache),
                    let size = FileStatus(path: model.file.path)?.size
                else { return nil }
                let context = UInt64(max(1, min(entry.contextLength ?? maximumContext, maximumContext)))
                let cacheBytes = (try? GGUFHeader.read(path: model.file.path))?.kvCacheBytes(context: context)
                var fit = MemoryFit(
                    weightBytes: size, cacheBytes: Int64(clamping: cacheBytes ?? 0),
                    availableBytes: AvailableMemory.current())
                fit.cacheKnown = cacheBytes != nil
                return fit
            case .whisperServer, .sentenceEncoder:
                return MemoryFit(weightBytes: entry.sizeBytes, cacheBytes: 0, availableBytes: AvailableMemory.current())
            }
        }

        public func installation(of kind: RuntimeKind) async -> Result<String, RuntimeUnavailable>? {
            if let known = installed.byKind.withLock({ $0[kind] }) { return known }
            if let since = installed.missingSince.withLock({ $0[kind] }), since.duration(to: .now) < .seconds(30) {
                return .failure(RuntimeUnavailable(Self.installHint(kind)))
            }
            let chatRuntime = chatRuntime
            let transcriptionRuntime = transcriptionRuntime
            let hasEncoder = encoder != nil
            let found: Result<String, RuntimeUnavailable>? = try? await BlockingWork.run {
                switch kind {
                case .llamaServer:
                    (chatRuntime ?? LocalServerRuntime.find()).map { .success("\($0)") }
                        ?? .failure(RuntimeUnavailable(Self.installHint(.llamaServer)))
                case .whisperServer:
                    (transcriptionRuntime ?? TranscriptionServerRuntime.find()).map { .success("\($0)") }
                        ?? .failure(RuntimeUnavailable(Self.installHint(.whisperServer)))
                case .sentenceEncoder:
                    !hasEncoder
                        ? .failure(RuntimeUnavailable(Self.installHint(.sentenceEncoder)))
                        : .success("ModelDepot's BERT encoder, in this process")
                }
            }
            // What was found is kept; a runtime missing is looked for again after 30 s (one installed while the app
            // runs is found then), not on every page.
            switch found {
            case .success?: installed.byKind.withLock { $0[kind] = found }
            case .failure?: installed.missingSince.withLock { $0[kind] = .now }
            case nil: break
            }
            return found
        }

        static func installHint(_ kind: RuntimeKind) -> String {
            switch kind {
            case .llamaServer: LocalServerRuntime.installHint
            case .whisperServer: TranscriptionServerRuntime.installHint
            case .sentenceEncoder: "this app does not link ModelDepotEmbeddings' encoder"
            }
        }

        public func launch(_ entry: CatalogEntry, kind: RuntimeKind) async throws -> any RunningModel {
            switch kind {
            case .llamaServer:
                let model = try LocalModel.resolve(entry.name, catalog: catalog, cache: cache)
                return try await LocalModelServer.start(
                    model: model.file, alias: entry.name, runtime: chatRuntime,
                    contextLength: max(1, min(entry.contextLength ?? maximumContext, maximumContext)),
                    records: RuntimeRecords(cache: cache))
            case .whisperServer:
                let model = try LocalTranscriptionModel.resolve(entry.name, catalog: catalog, cache: cache)
                return try await LocalModelServer.startTranscription(
                    model: model.folder, runtime: transcriptionRuntime, records: RuntimeRecords(cache: cache))
            case .sentenceEncoder:
                guard let encoder else {
                    throw ModelDepotError(
                        .unavailable,
                        "\(entry.name) runs in this process with ModelDepotEmbeddings' encoder, which this app does not link."
                    )
                }
                return try await encoder(entry)
            }
        }
    }
#endif
