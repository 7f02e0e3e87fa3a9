import Synchronization

/// Runs one piece of work per key at a time and hands its result to every caller that asks meanwhile: N clients
/// asking the mirror about a repository it has not seen make one call to the upstream, not N.
final class RequestCoalescer<Value: Sendable>: Sendable {
    private let running = Mutex<[String: Task<Value, any Error>]>([:])

    /// The result of `work` for `key`: of the call already under way, or of a new one.
    func value(for key: String, _ work: @escaping @Sendable () async throws -> Value) async throws -> Value {
        let task = running.withLock { running -> Task<Value, any Error> in
            if let task = running[key] { return task }
            let task = Task { try await work() }
            running[key] = task
            return task
        }
        defer { running.withLock { if $0[key] == task { $0[key] = nil } } }
        return try await task.value
    }
}
