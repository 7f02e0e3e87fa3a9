import Synchronization

/// The files the mirror streams through memory at once, across every connection. The connection cap leaves room for
/// one file per connection, which HTTP/2 breaks: one connection carries up to 100 streams, each reading a file of
/// its own. Past the budget a response waits for a file to close before it opens its own, so a few HTTP/2 clients
/// cannot spend every descriptor (and a megabyte of buffer per stream).
final class OpenFileBudget: Sendable {
    /// As many as the connection cap allows connections: descriptors are the process's, whichever server uses them.
    static let shared = OpenFileBudget(limit: ConnectionCap.limit(requested: 4096))

    let limit: Int
    private struct State {
        var open = 0
        var waiting: [CheckedContinuation<Void, Never>] = []
    }
    private let state = Mutex(State())

    init(limit: Int) { self.limit = max(1, limit) }

    /// Runs `body` holding one of the budget's files, after waiting for one when all are taken.
    func withFile<T: Sendable>(_ body: () async throws -> T) async rethrows -> T {
        await take()
        defer { give() }
        return try await body()
    }

    /// Files held now.
    var open: Int { state.withLock { $0.open } }

    private func take() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let granted = state.withLock { state -> Bool in
                guard state.open < limit else {
                    state.waiting.append(continuation)
                    return false
                }
                state.open += 1
                return true
            }
            if granted { continuation.resume() }
        }
    }

    private func give() {
        // The file passes straight to the first waiting response: `open` stays the same.
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiting.isEmpty else {
                state.open -= 1
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}
