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
                let cacheBytes = (try? GGUFHeader.read(path: model.file.path))?.kvCacheBytes(context: context) ?? 0
                return MemoryFit(
                    weightBytes: size, cacheBytes: Int64(clamping: cacheBytes),
                    availableBytes: AvailableMemory.current())
            case .whisperServer, .sentenceEncoder:
                return MemoryFit(weightBytes: entry.sizeBytes, cacheBytes: 0, availableBytes: AvailableMemory.current())
            }
        }

        public func installation(of kind: RuntimeKind) async -> Result<String, RuntimeUnavailable>? {
            if let known = installed.byKind.withLock({ $0[kind] }) { return known }
            let chatRuntime = chatRuntime
            let transcriptionRuntime = transcriptionRuntime
            let hasEncoder = encoder != nil
            let found: Result<String, RuntimeUnavailable>? = try? await BlockingWork.run {
                switch kind {
                case .llamaServer:
                    (chatRuntime ?? LocalServerRuntime.find()).map { .success("\($0)") }
                        ?? .failure(RuntimeUnavailable(LocalServerRuntime.installHint))
                case .whisperServer:
                    (transcriptionRuntime ?? TranscriptionServerRuntime.find()).map { .success("\($0)") }
                        ?? .failure(RuntimeUnavailable(TranscriptionServerRuntime.installHint))
                case .sentenceEncoder:
                    !hasEncoder
                        ? .failure(RuntimeUnavailable("this app does not link ModelDepotEmbeddings' encoder"))
                        : .success("ModelDepot's BERT encoder, in this process")
                }
            }
            // Only what was found is kept: a runtime installed while the app runs is found on the next look.
            if case .success? = found { installed.byKind.withLock { $0[kind] = found } }
            return found
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
