import Foundation
import Hummingbird
import NIOCore
import Synchronization

/// The app's open event streams (the live updates, a chat reply): each ends when its client goes away or the app
/// shuts down, and never holds a connection or a task for nobody.
///
/// A stream that has nothing to say writes nothing, and a server under back-pressure does not read the socket, so a
/// closed tab is noticed only by writing: every stream sends a comment line (`: keep-alive`) every
/// ``heartbeat``, and the write that fails ends it, its producer cancelled. On shutdown every stream sends
/// `event: shutdown` and ends, so the drain does not wait for streams nobody would end.
public final class EventStreams: Sendable {
    /// How often a quiet stream writes a comment, to find clients that left.
    public let heartbeat: Duration

    private struct State {
        var open = 0
        var closing = false
        var waiting: [UUID: CheckedContinuation<Void, Never>] = [:]
    }
    private let state = Mutex(State())

    public init(heartbeat: Duration = .seconds(15)) {
        self.heartbeat = heartbeat
    }

    /// Streams open now.
    public var openCount: Int { state.withLock { $0.open } }

    /// Tells every stream to say goodbye and end; streams opened after this end at once.
    public func closeAll() {
        let waiting = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.closing = true
            defer { state.waiting = [:] }
            return Array(state.waiting.values)
        }
        for waiter in waiting { waiter.resume() }
    }

    /// Returns once ``closeAll()`` has been called (or the task is cancelled).
    func closing() async {
        let id = UUID()
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let now = state.withLock { state -> Bool in
                    if state.closing || Task.isCancelled { return true }
                    state.waiting[id] = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiting.removeValue(forKey: id) }?.resume()
        }
    }

    /// What a stream's writer is handed, one at a time.
    private enum Outgoing: Sendable {
        case event(ByteBuffer)
        /// The newest event waits in the stream's slot (`latestOnly`).
        case latest
        case heartbeat
        case finished
        case shutdown
    }

    /// A `text/event-stream` body: `produce` sends events through the function it is given, while a heartbeat
    /// runs beside it; the body ends when `produce` returns, the client goes away (a write fails: `produce` is
    /// cancelled), or the app shuts down (`event: shutdown` is sent, `produce` is cancelled).
    ///
    /// `latestOnly`: each event replaces one not yet written (a state, where only the newest matters), so a client
    /// that stops reading holds one event in memory, not every one sent since.
    func body(
        clock: any Clock<Duration> = ContinuousClock(), latestOnly: Bool = false,
        produce: @escaping @Sendable (_ send: @escaping @Sendable (ByteBuffer) -> Void) async throws -> Void
    ) -> ResponseBody {
        ResponseBody { [self] writer in
            state.withLock { $0.open += 1 }
            defer { state.withLock { $0.open -= 1 } }
            let (outgoing, continuation) = AsyncStream.makeStream(of: Outgoing.self)
            // With `latestOnly` the stream carries a signal; the event waits here, replaced by a newer one.
            let pending = Mutex<ByteBuffer?>(nil)
            let producer = Task {
                try? await produce { event in
                    guard latestOnly else {
                        continuation.yield(.event(event))
                        return
                    }
                    let signal = pending.withLock { slot in
                        defer { slot = event }
                        return slot == nil
                    }
                    if signal { continuation.yield(.latest) }
                }
                continuation.yield(.finished)
            }
            let beat = Task { [heartbeat] in
                while (try? await clock.sleep(for: heartbeat)) != nil { continuation.yield(.heartbeat) }
            }
            let goodbye = Task {
                await closing()
                if !Task.isCancelled { continuation.yield(.shutdown) }
            }
            defer {
                producer.cancel()
                beat.cancel()
                goodbye.cancel()
                continuation.finish()
            }
            loop: for await item in outgoing {
                switch item {
                case .event(let buffer): try await writer.write(buffer)
                case .latest:
                    if let buffer = pending.withLock({ slot in
                        defer { slot = nil }; return slot
                    }) {
                        try await writer.write(buffer)
                    }
                case .heartbeat: try await writer.write(ByteBuffer(string: ": keep-alive\n\n"))
                case .finished: break loop
                case .shutdown:
                    try await writer.write(
                        ByteBuffer(string: "event: shutdown\ndata: {\"reason\": \"the server is stopping\"}\n\n"))
                    break loop
                }
            }
            try await writer.finish(nil)
        }
    }
}
