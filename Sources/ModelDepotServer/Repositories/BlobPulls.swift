import Foundation
import Logging
import ModelDepotCache
import ModelDepotCore
import ModelDepotTransfer
import Synchronization

/// What a pull-through mirror may ask of its upstream at once, so that clients cannot make it fetch without limit:
/// one cheap request (`Range: bytes=0-0`, then hang up) must not cost a whole multi-gigabyte pull, nor a burst of
/// requests for different files as many pulls at once.
public struct PullLimits: Sendable, Hashable {
    /// Files pulled from the upstream at once; further pulls wait for a turn.
    public var concurrent: Int
    /// Pulls that may wait for a turn; a request that would start one more gets `429` with `Retry-After`.
    public var queued: Int
    /// How long a pull goes on once no response follows it any more (every client hung up, or none came): then it
    /// is cancelled, keeping its bytes, and the next request for the file resumes it. Nil: such pulls finish.
    public var abandonedGrace: Duration?
    /// Pulls one client (one address) may have started and running or waiting at once, so that one client cannot
    /// fill the queue and turn everyone else away. Following a pull another client started is free. A tier in
    /// front of the mirror (nginx) is one client: raise it there.
    public var perClient: Int

    public init(concurrent: Int = 8, queued: Int = 64, abandonedGrace: Duration? = .seconds(30), perClient: Int = 16) {
        self.concurrent = max(1, concurrent)
        self.queued = max(0, queued)
        self.abandonedGrace = abandonedGrace
        self.perClient = max(1, perClient)
    }
}

/// The pulls under way, by blob: N clients asking for the same missing file join one pull. At most
/// ``PullLimits/concurrent`` run; up to ``PullLimits/queued`` more wait; a pull nobody follows is cancelled after
/// ``PullLimits/abandonedGrace``.
final class BlobPulls: Sendable {
    private struct Entry {
        var pull: BlobPull
        var repository: String
        var shown: (id: String, path: String)
        /// Who started it.
        var client: String
    }
    private let running = Mutex<[String: Entry]>([:])
    private let turns: ConnectionBudget
    private let limits: PullLimits
    private let clock: any Clock<Duration>
    private let metrics: MirrorMetrics
    private let logger: Logger

    init(
        limits: PullLimits = PullLimits(), clock: any Clock<Duration> = ContinuousClock(), metrics: MirrorMetrics,
        logger: Logger
    ) {
        self.limits = limits
        self.clock = clock
        turns = ConnectionBudget(limit: limits.concurrent)
        self.metrics = metrics
        self.logger = logger
    }

    /// Repositories (cache folder names) with a pull under way: the budget never evicts them.
    var repositories: Set<String> { running.withLock { Set($0.values.map(\.repository)) } }

    /// Pulls under way: those holding one of the ``PullLimits/concurrent`` turns, and those waiting for one (a pull
    /// is in the table from its start to its end, and takes the first free turn, so the first `concurrent` run).
    var queue: (running: Int, waiting: Int) {
        let count = running.withLock { $0.count }
        return (min(count, limits.concurrent), max(0, count - limits.concurrent))
    }

    /// The pulls under way, for the dashboard: repository, file, bytes so far and in all.
    var inFlight: [(repository: String, path: String, received: Int64, total: Int64)] {
        running.withLock { Array($0.values) }.map { entry in
            (entry.shown.id, entry.shown.path, entry.pull.receivedBytes, entry.pull.size)
        }.sorted { ($0.repository, $0.path) < ($1.repository, $1.path) }
    }

    /// The running pull of `etag`, or a new one running `work` (which returns the bytes it received upstream);
    /// nil when the blob is complete at `blobPath` after all. The pull belongs to no request: a client that hangs
    /// up does not stop it for the others; when all have (``BlobPull/followed(_:)``), it is cancelled after the
    /// grace period unless the limits say to finish it.
    ///
    /// - Throws: ``HubServerError`` 429 with `Retry-After` when as many pulls as the limits allow run and wait, or
    ///   `client` has started as many as one client may.
    func follow(
        etag: String, repository: String, client: String = "", shown: (id: String, path: String) = ("", ""),
        size: Int64,
        partialPath: String, blobPath: String,
        work: @escaping @Sendable (BlobPull) async throws -> Int64
    ) throws -> BlobPull? {
        let limits = self.limits
        let (pull, isNew) = try running.withLock { running -> (BlobPull?, Bool) in
            if let known = running[etag] { return (known.pull, false) }
            // A pull renames its blob into place before it leaves `running`: a request that looked for the blob
            // just before a pull finished, and comes here just after, finds it now instead of pulling it again.
            if CacheScanner.regularFileSize(blobPath) == size { return (nil, false) }
            guard running.count < limits.concurrent + limits.queued else {
                throw HubServerError(
                    status: 429, code: nil,
                    message:
                        "The mirror is pulling \(limits.concurrent) files from its upstream and \(running.count - limits.concurrent) more are waiting; try again shortly.",
                    commit: nil, retryAfter: .seconds(5))
            }
            let mine = running.values.filter { $0.client == client }.count
            guard mine < limits.perClient else {
                throw HubServerError(
                    status: 429, code: nil,
                    message:
                        "This client has \(mine) files being pulled from the upstream already (at most \(limits.perClient) at once); try again when one is done.",
                    commit: nil, retryAfter: .seconds(5))
            }
            let pull = BlobPull(etag: etag, size: size, partialPath: partialPath, blobPath: blobPath)
            running[etag] = Entry(pull: pull, repository: repository, shown: shown, client: client)
            return (pull, true)
        }
        guard let pull else { return nil }
        guard isNew else {
            metrics.count(.pullsJoined)
            return pull
        }
        metrics.count(.pullsStarted)
        metrics.adjustPullsInFlight(by: 1)
        let task = Task { [turns, metrics, logger] in
            let outcome: BlobPull.Outcome
            do {
                try await turns.acquire()
                defer { turns.release() }
                try Task.checkCancellation()
                _ = try await work(pull)
                outcome = .verified
            } catch {
                if pull.wasAbandoned {
                    outcome = .failed("cancelled: no client followed the pull any more")
                    metrics.count(.pullsAbandoned)
                    logger.notice(
                        "cancelled a pull no client follows any more; its bytes are kept for the next request",
                        metadata: ["blob": "\(etag)", "received": "\(pull.receivedBytes)"])
                } else {
                    let message = (error as? ModelDepotError)?.message ?? "\(error)"
                    logger.error("pull from upstream failed", metadata: ["blob": "\(etag)", "error": "\(message)"])
                    outcome = .failed(message)
                    metrics.count(.pullsFailed)
                }
            }
            self.running.withLock { _ = $0.removeValue(forKey: etag) }
            metrics.adjustPullsInFlight(by: -1)
            pull.finished(outcome)
        }
        if let grace = limits.abandonedGrace {
            pull.whenAbandoned(for: grace, clock: clock) { task.cancel() }
        }
        return pull
    }
}
