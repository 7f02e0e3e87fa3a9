import ModelDepotCore
import ModelDepotHub
import ModelDepotTransfer
import ModelDepotTrust
import Synchronization

/// Where a controllable transfer stands. ``DownloadTask`` (one file) and ``ModelDownloadTask`` (a repository)
/// both report these states, with their own progress and result types.
public enum TransferState<Progress: Sendable, Output: Sendable>: Sendable {
    case pending
    case downloading(Progress)
    case paused(Progress?)
    case completed(Output)
    case failed(ModelDepotError)
    case cancelled

    /// True for `completed`, `failed` and `cancelled`: nothing more will happen without a resume.
    public var isFinal: Bool {
        switch self {
        case .completed, .failed, .cancelled: true
        default: false
        }
    }
}

/// The state machine behind the observable tasks: runs an operation in a `Task`, publishes its progress and
/// state to any number of subscribers, and really stops it on pause or cancel (the operation sees
/// cancellation; its partial data stays for a resume).
final class TransferController<Progress: Sendable & Equatable, Output: Sendable>: Sendable {
    typealias State = TransferState<Progress, Output>
    typealias Operation = @Sendable (_ report: @escaping @Sendable (Progress) -> Void) async throws -> Output

    private enum Intent { case run, pause, cancel }

    private struct Inner {
        var state: State = .pending
        var lastProgress: Progress?
        var intent: Intent = .run
        var running: Task<Void, Never>?
        var subscribers: [Int: AsyncStream<State>.Continuation] = [:]
        var nextSubscriber = 0
        var resultWaiters: [CheckedContinuation<Void, Never>] = []
    }

    private let operation: Operation
    /// A new progress event as shown after the last one (`TransferProgress.continuing(from:)`).
    private let continuing: @Sendable (_ event: Progress, _ earlier: Progress) -> Progress
    private let inner = Mutex(Inner())

    init(operation: @escaping Operation) where Progress: TransferProgress {
        self.operation = operation
        self.continuing = { event, earlier in event.continuing(from: earlier) }
    }

    var state: State { inner.withLock { $0.state } }

    /// The last progress reported, as shown (see `TransferProgress`); survives pauses and resumes.
    var lastProgress: Progress? { inner.withLock { $0.lastProgress } }

    /// How many `states` streams are being followed now (each ends when its reader stops).
    var subscriberCount: Int { inner.withLock { $0.subscribers.count } }

    /// Every state from now on, starting with the current one; ends after a final state.
    var states: AsyncStream<State> {
        AsyncStream { continuation in
            let id = inner.withLock { inner -> Int in
                inner.nextSubscriber += 1
                continuation.yield(inner.state)
                if inner.state.isFinal {
                    continuation.finish()
                } else {
                    inner.subscribers[inner.nextSubscriber] = continuation
                }
                return inner.nextSubscriber
            }
            continuation.onTermination = { [weak self] _ in
                _ = self?.inner.withLock { $0.subscribers.removeValue(forKey: id) }
            }
        }
    }

    /// Starts, or restarts after a pause, failure or cancel. Does nothing while running or once completed.
    func resume() {
        inner.withLock { inner in
            guard inner.running == nil else { return }
            if case .completed = inner.state { return }
            inner.intent = .run
            inner.running = Task { await self.run() }
        }
    }

    func pause() async { await stop(with: .pause) }

    /// Stops for good (until a resume) and waits for the operation to end.
    func cancel() async {
        await stop(with: .cancel)
        update { inner in inner.state.isFinal ? nil : set(.cancelled, in: &inner) }
    }

    /// Waits for a final state and returns the output, or throws what ended the operation.
    func result() async throws -> Output {
        while true {
            switch inner.withLock({ $0.state }) {
            case .completed(let output): return output
            case .failed(let error): throw error
            case .cancelled: throw ModelDepotError.cancelled()
            default:
                await withCheckedContinuation { continuation in
                    let ready = inner.withLock { inner -> Bool in
                        if inner.state.isFinal { return true }
                        inner.resultWaiters.append(continuation)
                        return false
                    }
                    if ready { continuation.resume() }
                }
            }
        }
    }

    private func stop(with intent: Intent) async {
        let running = inner.withLock { inner -> Task<Void, Never>? in
            inner.intent = intent
            return inner.running
        }
        running?.cancel()
        await running?.value
    }

    private func run() async {
        let outcome: State
        do {
            let output = try await operation { progress in
                self.update { inner in
                    let shown = inner.lastProgress.map { self.continuing(progress, $0) } ?? progress
                    inner.lastProgress = shown
                    guard case .run = inner.intent else { return nil }
                    return self.set(.downloading(shown), in: &inner)
                }
            }
            outcome = .completed(output)
        } catch let error as ModelDepotError {
            outcome = .failed(error)
        } catch is CancellationError {
            outcome = .failed(.cancelled())
        } catch {
            outcome = .failed(ModelDepotError(.network, "\(error)", underlying: error))
        }
        update { inner in
            inner.running = nil
            switch (outcome, inner.intent) {
            case (.failed(let error), .pause) where error.code == .cancelled:
                return set(.paused(inner.lastProgress), in: &inner)
            case (.failed(let error), .cancel) where error.code == .cancelled: return set(.cancelled, in: &inner)
            default: return set(outcome, in: &inner)
            }
        }
    }

    /// Publishes a state to subscribers; final states also release ``result()`` waiters.
    ///
    /// Ending streams and resuming waiters runs their callbacks, which take the lock again, so that part is
    /// returned to be run by ``update(_:)`` after unlocking.
    private func set(_ state: State, in inner: inout Inner) -> (@Sendable () -> Void)? {
        inner.state = state
        for subscriber in inner.subscribers.values { subscriber.yield(state) }
        guard state.isFinal else { return nil }
        let subscribers = Array(inner.subscribers.values)
        let waiters = inner.resultWaiters
        inner.subscribers.removeAll()
        inner.resultWaiters.removeAll()
        return {
            for subscriber in subscribers { subscriber.finish() }
            for waiter in waiters { waiter.resume() }
        }
    }

    /// Runs `body` with the lock held, then whatever follow-up it returned.
    private func update(_ body: (inout Inner) -> (@Sendable () -> Void)?) {
        let followUp = inner.withLock { body(&$0) }
        followUp?()
    }
}
