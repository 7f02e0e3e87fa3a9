import Foundation
import ModelDepot
import ModelDepotCore

/// Which program serves a model here, decided from its catalog entry alone.
public enum RuntimeKind: String, Sendable, Hashable, Codable {
    /// llama.cpp's OpenAI-compatible server, for GGUF text generation and embeddings.
    case llamaServer
    /// The in-process BERT-family sentence encoder (`ModelDepotEmbeddings`), for safetensors embedding models.
    case sentenceEncoder
    /// faster-whisper-server, for CTranslate2 Whisper models.
    case whisperServer

    /// The runtime for `entry`, or why none here can serve it (a reason a person can act on).
    public static func serving(_ entry: CatalogEntry) -> Result<RuntimeKind, RuntimeUnavailable> {
        let capabilities = Set(entry.capabilities)
        switch entry.format {
        case .gguf where capabilities.contains(.embeddings) || !capabilities.isDisjoint(with: textKinds):
            return .success(.llamaServer)
        case .gguf:
            return .failure(
                .init("llama.cpp's server runs GGUF models for text and embeddings, not \(entry.name)'s kind"))
        case .safetensors where capabilities.contains(.embeddings):
            return .success(.sentenceEncoder)
        case .ctranslate2 where capabilities.contains(.transcription):
            return .success(.whisperServer)
        case .coreml:
            return .failure(.init("Core ML models run in apps on Apple devices"))
        case .mlx:
            return .failure(.init("MLX models run on Apple silicon Macs, with MLX"))
        case .pytorch, .onnx:
            return .failure(
                .init("no runtime here runs \(entry.format.rawValue) files; pick a GGUF build of this model"))
        default:
            return .failure(.init("no runtime here serves \(entry.format.rawValue) models for \(entry.name)'s kind"))
        }
    }

    static let textKinds: Set<ModelCapability> = [.textGeneration, .codeGeneration, .reasoning]
}

/// Why no runtime here can serve a model.
public struct RuntimeUnavailable: Error, Sendable, Equatable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// A runtime serving one model: a local server's process, or an encoder in this process.
public protocol RunningModel: Sendable {
    /// Where it answers (the API root of a local server); nil for a model in this process.
    var endpoint: URL? { get }
    /// Whether it still runs (a server process that exited has not).
    var isRunning: Bool { get }
    /// Its last lines of output: why it stopped or failed to start.
    func lastLines() -> String
    /// Stops it and returns once it has ended.
    func stop() async
}

/// Starts the runtime for a model: the real servers, or scripted ones in tests.
public protocol RuntimeLauncher: Sendable {
    func launch(_ entry: CatalogEntry, kind: RuntimeKind) async throws -> any RunningModel
    /// What loading `entry` would take against the memory available now; nil when unknown.
    func memoryFit(_ entry: CatalogEntry, kind: RuntimeKind) -> MemoryFit?
}

extension RuntimeLauncher {
    public func memoryFit(_ entry: CatalogEntry, kind: RuntimeKind) -> MemoryFit? { nil }
}

/// The models loaded into runtimes, for the app's "Loaded models" panel and its playgrounds: loads a model once
/// however many ask at the same time, reports loading → ready → failed (with the runtime's last lines), notices a
/// runtime that died, unloads on request or after an idle time, and stops everything on ``unloadAll()``.
public actor ModelRuntimes {
    /// One model's runtime, as the panel shows it.
    public struct Loaded: Sendable, Equatable {
        public enum State: Sendable, Equatable {
            case loading
            case ready(endpoint: URL?)
            /// The runtime did not start, or stopped on its own; the reason holds its last lines.
            case failed(String)
        }

        public var name: String
        public var kind: RuntimeKind
        public var state: State

        public init(name: String, kind: RuntimeKind, state: State) {
            self.name = name
            self.kind = kind
            self.state = state
        }
    }

    private struct Slot {
        var kind: RuntimeKind
        var state: Loaded.State
        var running: (any RunningModel)?
        var starting: Task<any RunningModel, any Error>?
        var lastUsed: Duration
    }

    private let launcher: any RuntimeLauncher
    private let clock: EngineClock
    private var slots: [String: Slot] = [:]
    /// A model nobody used for this long is unloaded by ``unloadIdle()``; nil: never.
    public let idleTime: Duration?

    public init(
        launcher: any RuntimeLauncher, idleTime: Duration? = .seconds(15 * 60),
        clock: any Clock<Duration> = ContinuousClock()
    ) {
        self.launcher = launcher
        self.idleTime = idleTime
        self.clock = EngineClock(clock)
    }

    /// Every model loaded, loading or failed, by name.
    public var loaded: [Loaded] {
        refreshExited()
        return slots.keys.sorted().map { Loaded(name: $0, kind: slots[$0]!.kind, state: slots[$0]!.state) }
    }

    /// What loading `entry` would take against the memory available now, to show before loading; nil when unknown.
    public func memoryFit(_ entry: CatalogEntry) -> MemoryFit? {
        guard case .success(let kind) = RuntimeKind.serving(entry) else { return nil }
        return launcher.memoryFit(entry, kind: kind)
    }

    /// Loads `entry` into its runtime, or returns the one already loaded (or loading: one runtime per model however
    /// many ask at once). A runtime that died is started again. A model that clearly does not fit in the memory
    /// available is refused unless `ignoringMemory`.
    ///
    /// - Throws: `unavailable` when no runtime here serves it (the reason says why), when it does not fit (with the
    ///   estimate), or when the runtime failed to start (with its last lines).
    @discardableResult
    public func load(_ entry: CatalogEntry, ignoringMemory: Bool = false) async throws -> any RunningModel {
        refreshExited()
        let kind: RuntimeKind
        switch RuntimeKind.serving(entry) {
        case .success(let found): kind = found
        case .failure(let reason):
            throw ModelDepotError(.unavailable, "\(entry.name) cannot be loaded here: \(reason).")
        }
        if !ignoringMemory, slots[entry.name]?.running?.isRunning != true, slots[entry.name]?.starting == nil,
            let fit = launcher.memoryFit(entry, kind: kind), !fit.fits
        {
            throw ModelDepotError(
                .unavailable,
                "\(entry.name) does not fit in this machine's memory now: it \(fit.summary). Close other programs or load a smaller model; load it anyway to try."
            )
        }
        let now = await elapsed()
        if var slot = slots[entry.name] {
            slot.lastUsed = now
            slots[entry.name] = slot
            if let running = slot.running, running.isRunning { return running }
            if let starting = slot.starting {
                let running = try await starting.value
                // Unloaded while it started: the one who started it stops it; this caller must not use it.
                guard slots[entry.name]?.starting == starting || slots[entry.name]?.running != nil else {
                    throw Self.unloadedWhileStarting(entry.name)
                }
                return running
            }
        }
        let launcher = launcher
        let starting = Task { try await launcher.launch(entry, kind: kind) }
        slots[entry.name] = Slot(kind: kind, state: .loading, running: nil, starting: starting, lastUsed: now)
        do {
            let running = try await starting.value
            // An unload while it was starting wins: stop what just started.
            guard slots[entry.name]?.starting == starting else {
                await running.stop()
                throw Self.unloadedWhileStarting(entry.name)
            }
            slots[entry.name] = Slot(
                kind: kind, state: .ready(endpoint: running.endpoint), running: running, starting: nil, lastUsed: now)
            return running
        } catch {
            if slots[entry.name]?.starting == starting {
                slots[entry.name]?.starting = nil
                slots[entry.name]?.state = .failed("\(error)")
            }
            throw error
        }
    }

    /// Marks `name` as used now (a chat turn, an embedding): the idle time starts over.
    public func touch(_ name: String) async {
        let now = await elapsed()
        slots[name]?.lastUsed = now
    }

    /// Stops `name`'s runtime (and a start in progress) and forgets it.
    public func unload(_ name: String) async {
        guard let slot = slots.removeValue(forKey: name) else { return }
        slot.starting?.cancel()
        await slot.running?.stop()
    }

    /// Unloads every model unused for ``idleTime``; returns their names. Each is checked again just before it goes:
    /// a model used while another one stopped stays.
    @discardableResult
    public func unloadIdle() async -> [String] {
        guard let idleTime else { return [] }
        var unloaded: [String] = []
        for name in slots.keys.sorted() {
            let now = await elapsed()
            guard let slot = slots[name], slot.running != nil, now - slot.lastUsed >= idleTime else { continue }
            await unload(name)
            unloaded.append(name)
        }
        return unloaded
    }

    /// Stops every runtime at once (the app is stopping), and those loaded meanwhile too, and returns once all have
    /// ended.
    public func unloadAll() async {
        while !slots.isEmpty {
            let taken = slots
            slots.removeAll()
            await withTaskGroup(of: Void.self) { group in
                for slot in taken.values {
                    slot.starting?.cancel()
                    if let running = slot.running { group.addTask { await running.stop() } }
                    if let starting = slot.starting {
                        // A start that completes despite the cancellation is stopped too.
                        group.addTask { await (try? starting.value)?.stop() }
                    }
                }
            }
        }
    }

    private static func unloadedWhileStarting(_ name: String) -> ModelDepotError {
        ModelDepotError(.cancelled, "\(name) was unloaded while its runtime started; load it again to use it.")
    }

    /// A runtime that stopped on its own is failed, with its last lines.
    private func refreshExited() {
        for (name, slot) in slots {
            guard let running = slot.running, !running.isRunning else { continue }
            slots[name]?.running = nil
            slots[name]?.state = .failed("the runtime stopped: \(running.lastLines())")
        }
    }

    private func elapsed() async -> Duration { clock.elapsed() }
}
