import Foundation
import ModelDepot
import ModelDepotCore

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
        /// The estimate it was loaded with; nil when none could be made.
        public var memory: MemoryFit?
        /// What its process has in RAM now (a server's); nil for a model in this process or one not running.
        public var residentBytes: Int64?
        /// Uses under way (``ModelRuntimes/use(_:)``): while there are any the idle unload leaves it loaded.
        public var uses: Int

        public init(
            name: String, kind: RuntimeKind, state: State, memory: MemoryFit? = nil, residentBytes: Int64? = nil,
            uses: Int = 0
        ) {
            self.name = name
            self.kind = kind
            self.state = state
            self.memory = memory
            self.residentBytes = residentBytes
            self.uses = uses
        }
    }

    private struct Slot {
        var kind: RuntimeKind
        var state: Loaded.State
        var running: (any RunningModel)?
        var starting: Task<any RunningModel, any Error>?
        var lastUsed: Duration
        var memory: MemoryFit?
        /// Which start this slot belongs to: a caller that waited on a start checks it is still the same one.
        var generation: UInt64
        /// Uses under way (a reply streaming, a recording transcribing): the idle unload leaves it alone.
        var uses = 0
    }

    private let launcher: any RuntimeLauncher
    private let clock: EngineClock
    private var slots: [String: Slot] = [:]
    private var generations: UInt64 = 0
    /// Models loaded past the memory estimate once: a person said so, and a later load (after an idle unload, a
    /// crash) is not refused again.
    private var memoryOverridden: Set<String> = []
    /// A model nobody used for this long is unloaded by ``unloadIdle()``; nil: never.
    public nonisolated let idleTime: Duration?

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
        return slots.keys.sorted().map { name in
            let slot = slots[name]!
            return Loaded(
                name: name, kind: slot.kind, state: slot.state, memory: slot.memory,
                residentBytes: slot.running?.residentBytes, uses: slot.uses)
        }
    }

    /// What loading `entry` would take against the memory available now (less what other models hold: the whole
    /// estimate of those still loading, and the weights of those loaded, which the system counts as free because
    /// they are mapped from disk), to show before loading; nil when unknown. The estimate reads the model's header
    /// and the system's figures off the cooperative pool.
    public func memoryFit(_ entry: CatalogEntry) async -> MemoryFit? {
        guard case .success(let kind) = RuntimeKind.serving(entry) else { return nil }
        return reserving(await estimate(entry, kind: kind), for: entry.name)
    }

    /// Whether the runtime for `kind` is installed here (what it is, or what installs it); nil when not known.
    public func installation(of kind: RuntimeKind) async -> Result<String, RuntimeUnavailable>? {
        await launcher.installation(of: kind)
    }

    private func estimate(_ entry: CatalogEntry, kind: RuntimeKind) async -> MemoryFit? {
        let launcher = launcher
        return (try? await BlockingWork.run { launcher.memoryFit(entry, kind: kind) }) ?? nil
    }

    /// Whether the system counts a file mapped into a running process as memory that is free: Linux's
    /// `MemAvailable` does (llama.cpp maps GGUF weights), so a loaded llama.cpp model's weights are set aside by
    /// hand; macOS counts pages in use as used. The in-process encoder and faster-whisper hold ordinary memory,
    /// which every system counts.
    #if os(Linux)
        static let mappedWeightsCountAsFree = true
    #else
        static let mappedWeightsCountAsFree = false
    #endif

    private func reserving(_ fit: MemoryFit?, for name: String) -> MemoryFit? {
        guard var fit else { return nil }
        fit.reservedBytes = slots.filter { $0.key != name }.values.reduce(0) { total, slot in
            if slot.starting != nil { return total + (slot.memory?.neededBytes ?? 0) }
            if slot.running != nil, slot.kind == .llamaServer, Self.mappedWeightsCountAsFree {
                return total + (slot.memory?.weightBytes ?? 0)
            }
            return total
        }
        return fit
    }

    /// Loads `entry` into its runtime, or returns the one already loaded (or loading: one runtime per model however
    /// many ask at once). A runtime that died is started again. A model that clearly does not fit in the memory
    /// available is refused unless `ignoringMemory`.
    ///
    /// - Throws: `unavailable` when no runtime here serves it (the reason says why) or the runtime failed to start
    ///   (with its last lines); `insufficientMemory` when it does not fit (with the estimate). Two models loading at
    ///   once are each counted against what the other will take.
    @discardableResult
    public func load(_ entry: CatalogEntry, ignoringMemory: Bool = false) async throws -> any RunningModel {
        refreshExited()
        let kind: RuntimeKind
        switch RuntimeKind.serving(entry) {
        case .success(let found): kind = found
        case .failure(let reason):
            throw ModelDepotError(.unavailable, "\(entry.name) cannot be loaded here: \(reason).")
        }
        if let running = try await join(entry.name) { return running }
        let estimated = await estimate(entry, kind: kind)
        // The estimate suspended: a load that began meanwhile is joined, not started twice.
        refreshExited()
        if let running = try await join(entry.name) { return running }
        let memory = reserving(estimated, for: entry.name)
        if ignoringMemory { memoryOverridden.insert(entry.name) }
        if !ignoringMemory, !memoryOverridden.contains(entry.name), let memory, !memory.fits {
            throw ModelDepotError(
                .insufficientMemory,
                "\(entry.name) does not fit in this machine's memory now: it \(memory.summary). Close other programs or load a smaller model; load it anyway to try."
            )
        }
        let launcher = launcher
        let starting = Task { try await launcher.launch(entry, kind: kind) }
        generations += 1
        let generation = generations
        slots[entry.name] = Slot(
            kind: kind, state: .loading, running: nil, starting: starting, lastUsed: clock.elapsed(), memory: memory,
            generation: generation)
        do {
            let running = try await starting.value
            // An unload while it was starting wins: stop what just started.
            guard slots[entry.name]?.generation == generation else {
                await running.stop()
                throw Self.unloadedWhileStarting(entry.name)
            }
            slots[entry.name]?.state = .ready(endpoint: running.endpoint)
            slots[entry.name]?.running = running
            slots[entry.name]?.starting = nil
            return running
        } catch {
            if slots[entry.name]?.generation == generation, slots[entry.name]?.running == nil {
                slots[entry.name]?.starting = nil
                slots[entry.name]?.state = .failed("\(error)")
            }
            throw error
        }
    }

    /// The runtime of `name` when it runs or is starting (then once it has started), marked as used now; nil when
    /// it must be started. A caller that waited on a start which was then unloaded gets an error, not a runtime
    /// that was stopped (or another start's).
    private func join(_ name: String) async throws -> (any RunningModel)? {
        guard let slot = slots[name] else { return nil }
        slots[name]?.lastUsed = clock.elapsed()
        if let running = slot.running, running.isRunning { return running }
        guard let starting = slot.starting else { return nil }
        let running = try await starting.value
        // Still the same start, not unloaded meanwhile. The starter may not have resumed yet: whoever resumes first
        // records it as ready, so that what this caller shows next says so.
        guard slots[name]?.generation == slot.generation else {
            throw Self.unloadedWhileStarting(name)
        }
        if slots[name]?.running == nil {
            slots[name]?.running = running
            slots[name]?.starting = nil
            slots[name]?.state = .ready(endpoint: running.endpoint)
        }
        return running
    }

    /// Marks `name` as used now (a chat turn, an embedding): the idle time starts over.
    public func touch(_ name: String) {
        slots[name]?.lastUsed = clock.elapsed()
    }

    /// A use of `name` begins (a reply that will stream, a recording to transcribe): until ``endUse(_:)`` the idle
    /// unload leaves it loaded, however long the use takes.
    public func beginUse(_ name: String) {
        slots[name]?.uses += 1
        slots[name]?.lastUsed = clock.elapsed()
    }

    /// A use begun with ``beginUse(_:)`` ended; the idle time starts now.
    public func endUse(_ name: String) {
        guard let uses = slots[name]?.uses else { return }
        slots[name]?.uses = max(0, uses - 1)
        slots[name]?.lastUsed = clock.elapsed()
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
            let now = clock.elapsed()
            guard let slot = slots[name], slot.running != nil, slot.uses == 0, now - slot.lastUsed >= idleTime else {
                continue
            }
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

    /// A runtime that stopped on its own is failed, with its last lines, and stopped for good (its process
    /// reaped, its exit-time and runtime records dropped).
    private func refreshExited() {
        for (name, slot) in slots {
            guard let running = slot.running, !running.isRunning else { continue }
            slots[name]?.running = nil
            slots[name]?.state = .failed("the runtime stopped: \(running.lastLines())")
            Task { await running.stop() }
        }
    }
}

/// A use of a loaded model under way: while one is held the idle unload leaves the model loaded; it ends when the
/// last reference goes (a reply's stream finished or was abandoned, a transcription returned).
public final class RuntimeUse: Sendable {
    let runtimes: ModelRuntimes
    public let name: String

    init(runtimes: ModelRuntimes, name: String) {
        self.runtimes = runtimes
        self.name = name
    }

    deinit {
        let runtimes = runtimes
        let name = name
        Task { await runtimes.endUse(name) }
    }
}

extension ModelRuntimes {
    /// Begins a use of `name` (see ``beginUse(_:)``) that ends when the returned value goes.
    public func use(_ name: String) -> RuntimeUse {
        beginUse(name)
        return RuntimeUse(runtimes: self, name: name)
    }
}
