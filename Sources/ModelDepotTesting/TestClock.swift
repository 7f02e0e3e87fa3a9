import Synchronization

/// A clock that moves only when the test calls ``advance(by:)``; sleepers wake when their deadline passes.
public final class TestClock: Clock, Sendable {
    public typealias Instant = TestInstant

    private struct Sleeper {
        let deadline: TestInstant
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now = TestInstant(offset: .zero)
        var sleepers: [Int: Sleeper] = [:]
        /// Sleeps cancelled before they were registered: they must not wait at all.
        var cancelledBeforeRegistering: Set<Int> = []
        var nextID = 0
    }

    private let state = Mutex(State())

    public init() {}

    public var now: TestInstant { state.withLock { $0.now } }
    public var minimumResolution: Duration { .zero }

    /// How many tasks are sleeping on this clock right now.
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    public func sleep(until deadline: TestInstant, tolerance: Duration?) async throws {
        let id = state.withLock { state -> Int in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                // Cancellation can come before this registers the sleeper; then the handler below found nothing
                // to wake and left a mark instead, or the sleeper would wait forever.
                let outcome = state.withLock { state -> Result<Bool, any Error> in
                    if state.cancelledBeforeRegistering.remove(id) != nil { return .failure(CancellationError()) }
                    if deadline <= state.now { return .success(true) }
                    state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    return .success(false)
                }
                switch outcome {
                case .failure(let error): continuation.resume(throwing: error)
                case .success(true): continuation.resume()
                case .success(false): break
                }
            }
        } onCancel: {
            let sleeper = state.withLock { state -> Sleeper? in
                guard let sleeper = state.sleepers.removeValue(forKey: id) else {
                    state.cancelledBeforeRegistering.insert(id)
                    return nil
                }
                return sleeper
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves time forward and wakes every sleeper whose deadline has come.
    public func advance(by duration: Duration) {
        let due = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            state.now = state.now.advanced(by: duration)
            let now = state.now
            let ready = state.sleepers.filter { $0.value.deadline <= now }
            for id in ready.keys { state.sleepers[id] = nil }
            return ready.values.map(\.continuation)
        }
        for continuation in due { continuation.resume() }
    }
}
