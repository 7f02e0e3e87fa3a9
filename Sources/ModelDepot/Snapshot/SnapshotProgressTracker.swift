import Foundation
import ModelDepotCore
import ModelDepotHub
import ModelDepotTransfer
import ModelDepotTrust
import Synchronization

/// Sums the progress of the files of one pull into one byte-weighted ``SnapshotProgress``.
final class SnapshotProgressTracker: Sendable {
    private struct State {
        var progress: SnapshotProgress
        /// Bytes on disk per file in flight, and of those, the ones already there when its current run began.
        var inFlight: [String: (done: Int64, size: Int64, resumed: Int64)] = [:]
        /// Bytes received over the network by runs that ended (finished files, and earlier runs of files in
        /// flight: a resume, a restart after the network policy's pause).
        var receivedBefore: Int64 = 0
        /// Connections each file in flight holds.
        var connections: [String: Int] = [:]
        /// Files in flight that wait for a server or a retry.
        var waits: [String: TransferWait] = [:]
        /// What the Hub's API calls wait for, while the revision is resolved and the files listed.
        var apiWait: TransferWait?
        var endpoint: String?
        /// Bytes of finished files.
        var finishedBytes: Int64 = 0
        /// Bytes that were in the cache before the pull: on disk, but not part of its speed.
        var cachedBytes: Int64 = 0
        var meter = SpeedMeter()
        var lastEmit: Duration?
        var verified: [String] = []
        /// Whether a Xet failure was already said (the pull says it once, then goes on by HTTP).
        var xetFailureSaid = false
    }

    /// The CAS access of the pull's commit, asked once and shared by its files until a minute before it expires.
    private let xetAccessCache = Mutex<XetAccess?>(nil)

    private let state: Mutex<State>
    private let clock: EngineClock
    private let interval: Duration
    private let report: @Sendable (SnapshotProgress) -> Void

    init(clock: EngineClock, interval: Duration, report: @escaping @Sendable (SnapshotProgress) -> Void) {
        self.state = Mutex(State(progress: SnapshotProgress(phase: .resolving)))
        self.clock = clock
        self.interval = interval
        self.report = report
    }

    /// The pull's Xet access: the one asked for before while it has a minute left, else a new one from `ask`.
    func xetAccess(_ ask: () async throws -> XetAccess) async throws -> XetAccess {
        if let kept = xetAccessCache.withLock({ $0 }), kept.expires.timeIntervalSinceNow > 60 { return kept }
        let fresh = try await ask()
        xetAccessCache.withLock { $0 = fresh }
        return fresh
    }

    /// Keeps `access` (a fresh one, after the CAS refused the one before) for the pull's other files.
    func keepXetAccess(_ access: XetAccess) { xetAccessCache.withLock { $0 = access } }

    /// True the first time in the pull, false after: a Xet failure is said once, not once per file.
    func firstXetFailure() -> Bool {
        state.withLock { state in
            defer { state.xetFailureSaid = true }
            return !state.xetFailureSaid
        }
    }

    /// A file came through Xet: `network` bytes received, `disk` bytes copied from cached files.
    func xetFinished(network: Int64, disk: Int64) {
        emit(force: true) { state in
            state.progress.xetFiles += 1
            state.progress.xetBytesFromNetwork += network
            state.progress.xetBytesFromDisk += disk
        }
    }

    func start(endpoint: String) {
        emit(force: true) { state in
            state.endpoint = endpoint
            state.apiWait = .server(endpoint)
            state.progress.endpoint = endpoint
        }
    }

    /// Files now come from `endpoint` (a mirror failed and the next one took over).
    func using(endpoint: String) {
        let changed = state.withLock { $0.progress.endpoint != endpoint }
        guard changed else { return }
        emit(force: true) { $0.progress.endpoint = endpoint }
    }

    /// An API call waits before a retry, or (nil) is sent again: until the plan is known, the pull waits for
    /// the Hub either way.
    func apiWaiting(_ retry: TransferWait?) {
        let wait = retry ?? state.withLock { $0.endpoint.map(TransferWait.server) }
        let changed = state.withLock { $0.apiWait != wait }
        guard changed else { return }
        emit(force: true) { $0.apiWait = wait }
    }

    /// The plan is known: `cachedBytes` of `totalBytes` (in `cachedFiles` of `totalFiles`) are already on disk.
    func planned(totalBytes: Int64, totalFiles: Int, cachedBytes: Int64, cachedFiles: Int) {
        emit(force: true) { state in
            state.apiWait = nil
            // Everything cached: one final event says so, rather than a downloading phase with nothing to do.
            let everythingCached = cachedFiles == totalFiles
            state.progress.phase = everythingCached ? .completed : .downloading
            state.progress.alreadyCached = everythingCached
            if everythingCached { state.progress.estimatedSecondsRemaining = 0 }
            state.progress.totalBytes = totalBytes
            state.progress.totalFiles = totalFiles
            state.progress.filesCompleted = cachedFiles
            state.finishedBytes = cachedBytes
            state.cachedBytes = cachedBytes
        }
    }

    /// A file's progress: `done` bytes on disk, `resumed` of them already there when its current run began.
    func fileProgress(
        _ path: String, done: Int64, size: Int64, resumed: Int64 = 0, connections: Int = 0,
        waiting: TransferWait? = nil
    ) {
        let changedWait = state.withLock { $0.waits[path] != waiting }
        emit(force: changedWait) { state in
            // A new run of the file (a resume, a restart): what the one before received stays counted.
            if let earlier = state.inFlight[path], earlier.resumed != resumed {
                state.receivedBefore += max(0, earlier.done - earlier.resumed)
            }
            state.inFlight[path] = (done, size, resumed)
            state.connections[path] = connections
            state.waits[path] = waiting
        }
    }

    func fileFinished(_ path: String, size: Int64) {
        emit(force: true) { state in
            if let last = state.inFlight.removeValue(forKey: path) {
                state.receivedBefore += max(0, size - last.resumed)
            }
            state.connections.removeValue(forKey: path)
            state.waits.removeValue(forKey: path)
            state.finishedBytes += size
            state.progress.filesCompleted += 1
        }
    }

    /// A file that failed or was stopped no longer counts as in flight.
    func fileAbandoned(_ path: String) {
        state.withLock { state in
            if let last = state.inFlight.removeValue(forKey: path) {
                state.receivedBefore += max(0, last.done - last.resumed)
            }
            state.connections.removeValue(forKey: path)
            state.waits.removeValue(forKey: path)
        }
    }

    /// A blob that was checked by hash as it arrived.
    func verified(_ blob: String) {
        state.withLock { $0.verified.append(blob) }
    }

    var verifiedBlobs: [String] { state.withLock { $0.verified } }

    /// Compiling Core ML models: `done` of `total`, `current` in the works.
    func compiling(done: Int, total: Int, current: String?) {
        emit(force: true) { state in
            state.progress.phase = .compiling
            state.progress.modelsCompiled = done
            state.progress.modelsToCompile = total
            state.progress.currentFile = current
        }
    }

    func completed() {
        guard state.withLock({ $0.progress.phase != .completed }) else { return }
        emit(force: true) { state in
            state.inFlight.removeAll()
            state.connections.removeAll()
            state.waits.removeAll()
            state.progress.phase = .completed
            state.progress.currentFile = nil
            state.progress.estimatedSecondsRemaining = 0
        }
    }

    private func emit(force: Bool, _ change: (inout State) -> Void) {
        let now = clock.elapsed()
        let snapshot = state.withLock { state -> SnapshotProgress? in
            change(&state)
            let done = state.finishedBytes + state.inFlight.values.reduce(0) { $0 + $1.done }
            state.progress.bytesCompleted = done
            // The speed counts what came over the network: not the cache, not the partial files a resume found.
            let received = state.receivedBefore + state.inFlight.values.reduce(0) { $0 + max(0, $1.done - $1.resumed) }
            state.progress.bytesReceived = received
            state.progress.bytesPerSecond = state.meter.record(elapsed: now, bytes: received)
            state.progress.currentFile = state.inFlight.max { $0.value.size < $1.value.size }?.key
            state.progress.activeConnections = state.connections.values.reduce(0, +)
            if let (file, wait) = state.waits.min(by: { $0.key < $1.key }) {
                state.progress.waiting = wait
                state.progress.waitingFile = file
            } else {
                state.progress.waiting = state.apiWait
                state.progress.waitingFile = nil
            }
            if let total = state.progress.totalBytes, state.progress.bytesPerSecond > 0 {
                state.progress.estimatedSecondsRemaining = Double(max(0, total - done)) / state.progress.bytesPerSecond
            }
            if !force, let last = state.lastEmit, now - last < interval { return nil }
            state.lastEmit = now
            return state.progress
        }
        if let snapshot { report(snapshot) }
    }
}
