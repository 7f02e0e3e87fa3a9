import Foundation
import ModelDepotCore
import ModelDepotTransfer
import Synchronization

/// One upstream file on its way into the mirror's cache, which any number of responses follow.
///
/// The pull reports the byte ranges on disk as they are written; a reader may send any of them at once,
/// except the file's last byte, which is released only when the whole file has been verified and moved into
/// its blob. A pull that fails (bad bytes, upstream gone) releases nothing more, so every client stops short
/// of the full length: it sees a truncated transfer, never a complete file with wrong bytes.
final class BlobPull: Sendable {
    enum Outcome: Sendable, Equatable {
        case verified
        case failed(String)
    }

    /// The blob's name (SHA-256 or git blob id).
    let etag: String
    let size: Int64
    /// Where the bytes collect until verified.
    let partialPath: String
    /// Where they are once verified.
    let blobPath: String
    /// The thread the responses following this pull read the file on.
    let reads: BlockingWorkQueue

    private struct State {
        var onDisk = ByteRangeSet()
        var outcome: Outcome?
        var waiters: [(offset: Int64, id: Int, continuation: CheckedContinuation<Void, Never>)] = []
        var nextWaiter = 0
    }
    private let state = Mutex(State())

    /// The responses following the pull now, and what to do once none has for a while.
    private struct Followers {
        var count = 0
        /// Moves on every change, so a check scheduled before it knows it is out of date.
        var generation = 0
        var abandoned = false
        var grace: Duration?
        var clock: any Clock<Duration> = ContinuousClock()
        var cancel: (@Sendable () -> Void)?
    }
    private let followers = Mutex(Followers())

    init(etag: String, size: Int64, partialPath: String, blobPath: String) {
        self.etag = etag
        self.size = size
        self.partialPath = partialPath
        self.blobPath = blobPath
        reads = BlockingWorkQueue(label: "ModelDepot.mirror.reads")
    }

    var outcome: Outcome? { state.withLock { $0.outcome } }

    /// Whether the pull was cancelled because no response followed it for the grace period.
    var wasAbandoned: Bool { followers.withLock { $0.abandoned } }

    /// Asks for `cancel` to be called once no response has followed the pull for `grace` (counting from now, as a
    /// request that starts a pull may never follow it: a `HEAD`, a `304`, a `416`).
    func whenAbandoned(
        for grace: Duration, clock: any Clock<Duration> = ContinuousClock(), _ cancel: @escaping @Sendable () -> Void
    ) {
        let generation = followers.withLock { followers -> Int in
            followers.grace = grace
            followers.clock = clock
            followers.cancel = cancel
            return followers.generation
        }
        checkAbandoned(after: grace, generation: generation)
    }

    /// A response started (`true`) or stopped (`false`, however it ended: done, failed, or its client gone)
    /// following the pull.
    func followed(_ starting: Bool) {
        let check = followers.withLock { followers -> (Duration, Int)? in
            followers.count += starting ? 1 : -1
            followers.generation += 1
            guard followers.count == 0, let grace = followers.grace else { return nil }
            return (grace, followers.generation)
        }
        if let (grace, generation) = check { checkAbandoned(after: grace, generation: generation) }
    }

    private func checkAbandoned(after grace: Duration, generation: Int) {
        let clock = followers.withLock { $0.clock }
        Task {
            try? await clock.sleep(for: grace)
            guard outcome == nil else { return }
            let cancel = followers.withLock { followers -> (@Sendable () -> Void)? in
                guard followers.count == 0, followers.generation == generation, !followers.abandoned else { return nil }
                followers.abandoned = true
                return followers.cancel
            }
            cancel?()
        }
    }

    /// Readers waiting for bytes (for tests that must act while one waits).
    var waitingReaders: Int { state.withLock { $0.waiters.count } }

    /// Bytes of the blob on disk so far.
    var receivedBytes: Int64 { state.withLock { $0.onDisk.count } }

    /// The engine wrote more: wakes readers whose next byte is now releasable.
    func wrote(_ onDisk: ByteRangeSet) {
        let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.onDisk = onDisk
            return Self.takeWaiters(&state, size: size)
        }
        for waiter in ready { waiter.resume() }
    }

    /// The pull ended: every reader wakes, to send the rest (verified) or to stop short (failed).
    func finished(_ outcome: Outcome) {
        let waiting = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.outcome = outcome
            defer { state.waiters = [] }
            return state.waiters.map(\.continuation)
        }
        for waiter in waiting { waiter.resume() }
    }

    /// Where the run of releasable bytes that starts at `offset` ends, waiting until there is at least one;
    /// nil when the pull failed before releasing byte `offset`, or when the waiting task is cancelled (the server's
    /// stop cancels its handlers once the drain is over: a response waiting on a stuck upstream must not hold it).
    func releasable(from offset: Int64) async -> Int64? {
        while true {
            if let answer = state.withLock({ Self.releasableEnd(from: offset, $0, size: size) }) {
                return answer > offset ? answer : nil
            }
            if Task.isCancelled { return nil }
            let id = state.withLock { state in
                state.nextWaiter += 1
                return state.nextWaiter
            }
            await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    // Checked under the lock the cancellation handler takes: a cancellation either comes before
                    // (seen here) or finds the waiter in the list (and resumes it).
                    let now = state.withLock { state -> Bool in
                        if Task.isCancelled || Self.releasableEnd(from: offset, state, size: size) != nil {
                            return true
                        }
                        state.waiters.append((offset, id, continuation))
                        return false
                    }
                    if now { continuation.resume() }
                }
            } onCancel: {
                let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                    guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                    return state.waiters.remove(at: index).continuation
                }
                waiter?.resume()
            }
        }
    }

    /// nil while byte `offset` is not yet releasable; else the end of the releasable run from it (equal to
    /// `offset` when the pull failed).
    private static func releasableEnd(from offset: Int64, _ state: State, size: Int64) -> Int64? {
        switch state.outcome {
        case .verified: return size
        case .failed: return offset
        case nil:
            // The last byte waits for the verdict.
            let held = size - 1
            guard offset < held,
                let run = state.onDisk.ranges.first(where: { $0.lowerBound <= offset && offset < $0.upperBound })
            else { return nil }
            return min(run.upperBound, held)
        }
    }

    private static func takeWaiters(_ state: inout State, size: Int64) -> [CheckedContinuation<Void, Never>] {
        var ready: [CheckedContinuation<Void, Never>] = []
        var still: [(offset: Int64, id: Int, continuation: CheckedContinuation<Void, Never>)] = []
        for waiter in state.waiters {
            if releasableEnd(from: waiter.offset, state, size: size) != nil {
                ready.append(waiter.continuation)
            } else {
                still.append(waiter)
            }
        }
        state.waiters = still
        return ready
    }
}
