import Foundation
import Synchronization

/// A running download that an app can watch and control: pause, resume, cancel.
///
/// ```swift
/// let task = downloader.start(request)
/// for await state in task.states {
///     if case .downloading(let progress) = state { show(progress) }
/// }
/// let file = try await task.result().file
/// ```
/// Pausing and cancelling stop the transfer for real (connections close) and keep the partial data, so
/// ``resume()`` — or a new download of the same request, even in another process — continues from it.
public final class DownloadTask: Sendable {
    public enum State: Sendable {
        case pending
        case downloading(DownloadProgress)
        case paused(DownloadProgress?)
        case completed(DownloadResult)
        case failed(ModelDepotError)
        case cancelled

        /// True for `completed`, `failed` and `cancelled`: nothing more will happen without ``resume()``.
        public var isFinal: Bool {
            switch self {
            case .completed, .failed, .cancelled: true
            default: false
            }
        }
    }

    private enum Intent { case run, pause, cancel(discard: Bool) }

    private struct Inner {
        var state: State = .pending
        var lastProgress: DownloadProgress?
        var intent: Intent = .run
        var running: Task<Void, Never>?
        var subscribers: [Int: AsyncStream<State>.Continuation] = [:]
        var nextSubscriber = 0
        var resultWaiters: [CheckedContinuation<Void, Never>] = []
    }

    public let request: DownloadRequest
    private let downloader: Downloader
    private let inner = Mutex(Inner())

    init(request: DownloadRequest, downloader: Downloader) {
        self.request = request
        self.downloader = downloader
    }

    /// The current state.
    public var state: State { inner.withLock { $0.state } }

    /// Every state from now on, starting with the current one; ends after a final state.
    public var states: AsyncStream<State> {
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

    /// Progress events (phase, bytes, speed, ETA, connections) from now on; ends when the task reaches a final
    /// state, with a `completed` event if it succeeded.
    public var progress: AsyncStream<DownloadProgress> {
        let states = self.states
        return AsyncStream { continuation in
            let forwarding = Task {
                for await state in states {
                    switch state {
                    case .downloading(let progress): continuation.yield(progress)
                    case .completed(let result):
                        continuation.yield(
                            DownloadProgress(phase: .completed, bytesCompleted: result.size, totalBytes: result.size))
                    default: break
                    }
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in forwarding.cancel() }
        }
    }

    /// Starts (or restarts after a pause or failure) the transfer. Does nothing while it runs or once completed.
    public func resume() {
        inner.withLock { inner in
            guard inner.running == nil else { return }
            if case .completed = inner.state { return }
            inner.intent = .run
            inner.running = Task { await self.run() }
        }
    }

    /// Stops the transfer, keeping partial data; returns once the connections are closed.
    public func pause() async {
        await stop(with: .pause)
    }

    /// Stops the transfer for good. Partial data stays for a later download unless `discardingPartialData`.
    public func cancel(discardingPartialData: Bool = false) async {
        await stop(with: .cancel(discard: discardingPartialData))
        if discardingPartialData { Downloader.discardPartial(of: request) }
        update { inner in inner.state.isFinal ? nil : set(.cancelled, in: &inner) }
    }

    /// Waits for a final state and returns the file, or throws what ended the download.
    public func result() async throws -> DownloadResult {
        while true {
            let state = inner.withLock { $0.state }
            switch state {
            case .completed(let result): return result
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
            let result = try await downloader.download(request) { progress in
                self.update { inner in
                    inner.lastProgress = progress
                    guard case .run = inner.intent else { return nil }
                    return self.set(.downloading(progress), in: &inner)
                }
            }
            outcome = .completed(result)
        } catch let error as ModelDepotError {
            outcome = .failed(error)
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

extension Downloader {
    /// Starts downloading `request` and returns a handle to watch and control it.
    public func start(_ request: DownloadRequest) -> DownloadTask {
        let task = DownloadTask(request: request, downloader: self)
        task.resume()
        return task
    }
}
