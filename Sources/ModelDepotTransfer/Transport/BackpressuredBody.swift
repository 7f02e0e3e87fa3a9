import Foundation
import Synchronization

/// A transfer whose reading of the socket can be paused: a URLSession task (`suspend()`, `resume()`, `cancel()`
/// are documented thread-safe), or a scripted one in tests.
protocol PausableTask: Sendable {
    func suspend()
    func resume()
    func cancel()
}

/// A response body arriving from a delegate's thread and read by one async reader, with backpressure: once the unread
/// buffers hold more than `limit` bytes of memory the task is paused, and resumed once the reader has taken it down
/// to half. What counts is the memory a buffer keeps alive (``BodyChunk/retained``), not the bytes read into it: a
/// slow link's small reads into large buffers cannot hold more than the limit.
///
/// The pause and the resume happen under the same lock as the count they follow. Done after releasing it, a reader
/// that caught up could resume the task just before the delegate's thread paused it, leaving it paused for good with
/// the count saying otherwise (and a paused task has no timeout).
final class BackpressuredBody: Sendable {
    private struct State {
        /// Unread buffers from `chunkIndex` on; a buffer taken is let go at once (nil), not when the array is next
        /// compacted, or up to 64 buffers already written would stay in memory with each body.
        var chunks: [BodyChunk?] = []
        var chunkIndex = 0
        /// Memory the unread buffers keep alive.
        var buffered = 0
        /// How many unread chunks share each transport buffer (slices of one read), which counts once.
        var sharing: [UInt: Int] = [:]
        var paused = false
        var finished = false
        var failure: (any Error)?
        var reader: CheckedContinuation<BodyChunk?, any Error>?
    }

    private let state = Mutex(State())
    let task: any PausableTask
    /// Unread bytes past which the task is paused.
    let limit: Int
    /// Whether to pause at all (not with swift-corelibs-foundation, whose suspended data task starts over).
    let pauses: Bool

    init(task: any PausableTask, limit: Int, pauses: Bool) {
        self.task = task
        self.limit = limit
        self.pauses = pauses
    }

    /// Whether the task is paused now.
    var isPaused: Bool { state.withLock { $0.paused } }

    /// Bytes of `chunk` arrived; returns the memory the unread buffers now hold.
    @discardableResult
    func received(_ chunk: BodyChunk) -> Int {
        let (reader, buffered) = state.withLock { state -> (CheckedContinuation<BodyChunk?, any Error>?, Int) in
            if let reader = state.reader {
                state.reader = nil
                return (reader, state.buffered)
            }
            state.chunks.append(chunk)
            Self.count(chunk, in: &state, adding: true)
            if pauses, !state.paused, state.buffered > limit {
                state.paused = true
                task.suspend()
            }
            return (nil, state.buffered)
        }
        reader?.resume(returning: chunk)
        return buffered
    }

    /// The body ended, with `failure` or complete.
    func completed(_ failure: (any Error)?) {
        let reader = state.withLock { state in
            state.finished = true
            state.failure = failure
            defer { state.reader = nil }
            return state.reader
        }
        if let reader {
            if let failure { reader.resume(throwing: failure) } else { reader.resume(returning: nil) }
        }
    }

    /// The next buffer, waiting for one; nil at the end of the body.
    func next() async throws -> BodyChunk? {
        // A reader that keeps up finds a buffer waiting most of the time: take it without a continuation (each
        // one is an allocation and a suspension point). A cancelled reader still stops the task, as below.
        if let ready = state.withLock({ take(from: &$0) }) {
            if Task.isCancelled { task.cancel() }
            return try ready.get()
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let ready = state.withLock { state -> Result<BodyChunk?, any Error>? in
                    if let ready = take(from: &state) { return ready }
                    state.reader = continuation
                    return nil
                }
                if let ready { continuation.resume(with: ready) }
            }
        } onCancel: {
            task.cancel()
        }
    }

    /// The next buffer or the end, when there is one to give now (under the lock).
    private func take(from state: inout State) -> Result<BodyChunk?, any Error>? {
        if state.chunkIndex < state.chunks.count, let chunk = state.chunks[state.chunkIndex] {
            state.chunks[state.chunkIndex] = nil
            state.chunkIndex += 1
            Self.count(chunk, in: &state, adding: false)
            if state.chunkIndex > 64 || state.chunkIndex == state.chunks.count {
                state.chunks.removeFirst(state.chunkIndex)
                state.chunkIndex = 0
            }
            if state.paused, state.buffered <= limit / 2 {
                state.paused = false
                task.resume()
            }
            return .success(chunk)
        }
        if state.finished {
            return state.failure.map { .failure($0) } ?? .success(nil)
        }
        return nil
    }

    /// Counts `chunk`'s memory in or out of `buffered`: a transport buffer when its first unread slice arrives and
    /// when its last one is taken, a chunk that owns its bytes each time.
    private static func count(_ chunk: BodyChunk, in state: inout State, adding: Bool) {
        let (storage, bytes) = chunk.retained
        guard let storage else {
            state.buffered += adding ? bytes : -bytes
            return
        }
        let sharing = state.sharing[storage, default: 0] + (adding ? 1 : -1)
        if adding, sharing == 1 { state.buffered += bytes }
        if !adding, sharing == 0 { state.buffered -= bytes }
        state.sharing[storage] = sharing > 0 ? sharing : nil
    }

    /// The reader is gone: a body left unread stops downloading.
    func abandon() {
        if !state.withLock({ $0.finished }) { task.cancel() }
    }
}
