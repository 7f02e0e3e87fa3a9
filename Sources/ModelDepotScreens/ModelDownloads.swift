import Foundation
import ModelDepot

/// The downloads the screens start and show, by catalog name: each one's task, last progress and outcome,
/// one bandwidth limit for all of them, and a signal each time something changes (the web app's live
/// updates, a view's refresh).
///
/// Pausing, resuming, cancelling and retrying are decided here once; the screens only read.
public actor ModelDownloads {
    /// Where one catalog model's download stands, as the screens show it.
    public struct Entry: Sendable {
        public var name: String
        public var state: ModelDownloadTask.State
        /// The last progress seen, kept through pauses and failures so a bar never jumps back to zero.
        public var progress: SnapshotProgress?
        /// When the download started, for ordering.
        public var started: Date

        public init(name: String, state: ModelDownloadTask.State, progress: SnapshotProgress?, started: Date) {
            self.name = name
            self.state = state
            self.progress = progress
            self.started = started
        }
    }

    public nonisolated let manager: ModelManager
    public nonisolated let catalog: ModelCatalog
    /// The cap on bytes per second every download started here shares; nil `bytesPerSecond` is no cap.
    public nonisolated let bandwidth: BandwidthLimit
    private var entries: [String: Entry] = [:]
    /// Which task each row follows (the tasks themselves are the manager's): compared without leaving the actor, so
    /// a replaced task's late states, or a state arriving after a delete forgot the task, are judged right.
    private var followed: [String: ObjectIdentifier] = [:]
    /// Counts the changes beyond progress: a download started, paused, resumed or ended, or the cache changed
    /// (``cacheChanged()``). A screen that reads the disk (readiness) loads again when it moves; progress alone,
    /// many times a second, never moves it.
    public private(set) var generation = 0
    private var watchers: [UUID: AsyncStream<Void>.Continuation] = [:]
    /// How fast each download moved, second by second (the throughput charts), by name; kept across retries.
    private var histories: [String: ThroughputHistory] = [:]
    /// The clock the histories' seconds are counted on.
    private nonisolated let time: EngineClock
    /// Signals once a second while a chart has something to show, so its time axis moves on through pauses and
    /// stalls, when no progress arrives to signal.
    private var ticker: Task<Void, Never>?

    /// Downloads of `catalog`'s models through `manager`, under the manager's own bandwidth cap (every manager
    /// built from a `ModelManager.Configuration` has one the person can change while downloads run). `clock`
    /// times the throughput charts' seconds.
    public init(manager: ModelManager, catalog: ModelCatalog, clock: any Clock<Duration> = ContinuousClock()) {
        self.manager = manager
        self.catalog = catalog
        self.bandwidth = manager.bandwidth ?? BandwidthLimit(bytesPerSecond: nil)
        self.time = EngineClock(clock)
    }

    /// How fast `name`'s download moved over the last two minutes, second by second; nil when nothing flowed in
    /// that time (never started here, or stopped or ended long enough ago). A stall while it runs is zeros.
    public func throughput(of name: String) -> [ThroughputHistory.Sample]? {
        let now = time.elapsed()
        guard let samples = histories[name]?.samples(at: now), samples.contains(where: { $0.bytesPerSecond != nil })
        else { return nil }
        return samples
    }

    /// Every download here added up, second by second, over the last two minutes.
    public func throughput() -> [ThroughputHistory.Sample] {
        ThroughputHistory.sum(Array(histories.values), at: time.elapsed())
    }

    /// Every download started here, newest first.
    public var all: [Entry] { entries.values.sorted { $0.started > $1.started } }

    /// The download of `name`, if one was started.
    public func entry(_ name: String) -> Entry? { entries[name] }

    /// A stream that yields each time a download changes (progress, state); it ends when the caller stops
    /// iterating.
    public func changes() -> AsyncStream<Void> {
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id = UUID()
        watchers[id] = continuation
        continuation.onTermination = { _ in Task { await self.stopWatching(id) } }
        return stream
    }

    /// Starts downloading the catalog model `name`, or joins the download under way.
    ///
    /// - Throws: `invalidArgument` when the catalog has no such model.
    public func start(_ name: String) async throws {
        let entry = try catalogEntry(name)
        if let task = await manager.task(for: entry), !task.state.isFinal {
            if case .paused = task.state { task.resume() }
            // Started elsewhere (an app's own call, another screen): the row follows it from now on.
            if followed[entry.name] != ObjectIdentifier(task) { track(task, name: entry.name) }
            return
        }
        let task = await manager.download(entry)
        track(task, name: entry.name)
    }

    /// Pauses `name`'s download; what arrived stays.
    public func pause(_ name: String) async throws {
        try await task(name).pause()
    }

    /// Resumes a paused download from the bytes on disk.
    public func resume(_ name: String) async throws {
        try await task(name).resume()
    }

    /// Cancels `name`'s download (what arrived stays for a later download; cancelling is not a failure).
    public func cancel(_ name: String) async throws {
        try await task(name).cancel()
    }

    /// Starts a failed or cancelled download again; it resumes from what arrived.
    public func retry(_ name: String) async throws {
        let entry = try catalogEntry(name)
        if let task = await manager.task(for: entry), !task.state.isFinal { return }
        try await start(entry.name)
    }

    /// Removes the damaged files of `name` and downloads exactly those again.
    public func repair(_ name: String) async throws {
        let entry = try catalogEntry(name)
        let problems = try await manager.verify(entry.repo, type: entry.repoType).problems
        guard !problems.isEmpty else {
            // Nothing damaged by hash: a header or size problem; a download of the missing parts does it.
            try await start(entry.name)
            return
        }
        // Also when the repair fails half-way: it may have removed damaged files it could not fetch again.
        defer { cacheChanged() }
        _ = try await manager.repair(entry.repo, type: entry.repoType, problems: problems)
    }

    /// ``perform(_:on:)`` for every action but ``ModelAction/use``, which goes to `onUse`: opening a model is the
    /// app's (its chat screen, its embedder). What a button of any screen calls.
    public func run(
        _ action: ModelAction, on name: String, onUse: @Sendable (String) async throws -> Void
    ) async throws {
        if action == .use {
            try await onUse(name)
        } else {
            try await perform(action, on: name)
        }
    }

    /// A screen, then a new one after each change of the downloads: subscribed before the first load, so a change
    /// while it loads is never missed (a burst of changes gives one load). Ends when the caller stops reading.
    public nonisolated func screens<Screen: Sendable>(
        _ load: @escaping @Sendable () async throws -> Screen
    ) -> AsyncThrowingStream<Screen, any Error> {
        AsyncThrowingStream { continuation in
            let task = Task {
                let changes = await self.changes()
                do {
                    continuation.yield(try await load())
                    for await _ in changes {
                        guard !Task.isCancelled else { break }
                        continuation.yield(try await load())
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// Runs the button a screen offered for `name` (``ModelStatus/action``, ``DownloadsScreen/Button``): the one
    /// dispatch every front end shares, web pages and SwiftUI views alike. ``ModelAction/use`` is the app's
    /// (``run(_:on:onUse:)`` hands it over).
    ///
    /// - Throws: `invalidArgument` for ``ModelAction/use`` (using a model is the app's business) and for a name
    ///   the catalog lacks; what starting the download throws.
    public func perform(_ action: ModelAction, on name: String) async throws {
        switch action {
        case .download: try await start(name)
        case .pause: try await pause(name)
        case .resume: try await resume(name)
        case .cancel: try await cancel(name)
        case .retry: try await retry(name)
        case .repair: try await repair(name)
        case .use: throw ModelDepotError(.invalidArgument, "Using a model is up to the app; nothing to do here.")
        }
    }

    /// Cancels every download still running or paused and returns once each has stopped (an app that quits,
    /// a server that shuts down). What arrived stays for later.
    public func stopAll() async {
        ticker?.cancel()
        ticker = nil
        let running = await manager.downloads.filter { !$0.state.isFinal }
        for task in running { await task.cancel() }
        for task in running {
            for await state in task.states where state.isFinal { break }
        }
    }

    /// Sets the cap every running and future download shares; nil or 0 removes it.
    public func setBandwidthLimit(bytesPerSecond: Int64?) {
        bandwidth.bytesPerSecond = bytesPerSecond.flatMap { $0 > 0 ? $0 : nil }
        signal()
    }

    /// The catalog entry called `name`.
    ///
    /// - Throws: `invalidArgument` naming the model and saying where the known ones are listed.
    public nonisolated func catalogEntry(_ name: String) throws -> CatalogEntry {
        guard let entry = catalog.entry(named: name) else {
            throw ModelDepotError(
                .invalidArgument, "The catalog has no model called '\(name.prefix(80))'; the Models page lists them.")
        }
        return entry
    }

    /// The manager's download of catalog model `name` (the one registry; this actor keeps no tasks).
    private func task(_ name: String) async throws -> ModelDownloadTask {
        guard let task = await manager.task(for: try catalogEntry(name)) else { throw Self.notStarted(name) }
        return task
    }

    /// Says that the cache changed under the downloads (a model deleted, repaired or pruned): screens that read
    /// the disk load again.
    public func cacheChanged() {
        generation += 1
        signal()
    }

    private func track(_ task: ModelDownloadTask, name: String) {
        followed[name] = ObjectIdentifier(task)
        generation += 1
        entries[name] = Entry(name: name, state: task.state, progress: nil, started: Date())
        signal()
        Task { [weak self] in
            for await state in task.states {
                guard let self else { return }
                await self.record(state, of: task, name: name)
            }
        }
    }

    private func record(_ state: ModelDownloadTask.State, of task: ModelDownloadTask, name: String) {
        // A retried download replaced this task: its late states are not news.
        guard followed[name] == ObjectIdentifier(task), var entry = entries[name] else { return }
        if !Self.sameKind(entry.state, state) { generation += 1 }
        entry.state = state
        switch state {
        case .downloading(let progress): entry.progress = progress
        case .paused(let progress): entry.progress = progress ?? entry.progress
        case .completed(let snapshot): entry.progress = .completed(after: entry.progress, snapshot: snapshot)
        default: break
        }
        entries[name] = entry
        recordThroughput(of: name, entry.progress, flowing: Self.isFlowing(state))
        signal()
    }

    /// Bytes move only in the downloading phase (not while asking the Hub or compiling), and not while every file
    /// waits (for a retry, a host, the network): one file in backoff while others transfer is still flowing.
    private static func isFlowing(_ state: ModelDownloadTask.State) -> Bool {
        if case .downloading(let progress) = state {
            return progress.phase == .downloading && (progress.waiting == nil || progress.activeConnections > 0)
        }
        return false
    }

    private func recordThroughput(of name: String, _ progress: SnapshotProgress?, flowing: Bool) {
        guard let progress else { return }
        histories[name, default: ThroughputHistory()].record(
            receivedBytes: progress.bytesReceived, flowing: flowing, at: time.elapsed())
        guard ticker == nil else { return }
        ticker = Task { [weak self, time] in
            while !Task.isCancelled {
                try? await time.sleep(for: .seconds(1))
                // A ticker cancelled while it slept must not end the one that replaced it.
                guard !Task.isCancelled, let self, await self.tick() else { return }
            }
        }
    }

    /// One second passed: says so while a download is under way or paused and a chart shows anything, so the
    /// line moves on through a stall or a pause; else the ticker ends (progress starts it again). A finished
    /// download's chart stays as the last event left it, and a pause longer than the window stops the ticks.
    private func tick() -> Bool {
        let now = time.elapsed()
        let live =
            entries.values.contains { !$0.state.isFinal } && histories.values.contains { !$0.isEmpty(at: now) }
        if !live { ticker = nil }
        // Also on the last tick: the chart that moved on to nothing is shown as such.
        signal()
        return live
    }

    /// Whether two states differ only in their progress.
    private static func sameKind(_ one: ModelDownloadTask.State, _ other: ModelDownloadTask.State) -> Bool {
        switch (one, other) {
        case (.pending, .pending), (.downloading, .downloading), (.paused, .paused): true
        default: false
        }
    }

    private func signal() {
        for watcher in watchers.values { watcher.yield() }
    }

    private func stopWatching(_ id: UUID) { watchers[id] = nil }

    private static func notStarted(_ name: String) -> ModelDepotError {
        ModelDepotError(.invalidArgument, "No download of '\(name.prefix(80))' was started here.")
    }
}
