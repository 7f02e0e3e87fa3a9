#if MODELDEPOT_SERVER_STACK
    import AsyncHTTPClient
    import Foundation
    import ModelDepotCore
    import NIOCore
    import NIOHTTP1
    import Synchronization

    /// One async-http-client request's answer, taken through its delegate: the head for
    /// ``AsyncHTTPTransport/send(_:)``, then the body for one reader, with room for `limit` unread bytes.
    ///
    /// Why not `execute(_:timeout:)`: its body sequence holds one element (watermarks 1 and 1), so the event loop
    /// stops reading the socket after each read until the reader has taken it, and the two threads take turns
    /// instead of working at once. Measured on a 1 GiB loopback pull over one connection: 8,400 `epoll_ctl`s and
    /// 28,600 futex calls (one of each per 64 KiB read), 1.2 cores busy. Here the event loop goes on reading while the
    /// reader has less than `limit` bytes to take, and pauses (a future ``didReceiveBodyPart(task:_:)`` leaves
    /// pending) past it, until the reader has taken the body down to half.
    final class StreamedResponse: HTTPClientResponseDelegate, Sendable {
        typealias Response = Void

        private struct State {
            var headWaiter: CheckedContinuation<TransportResponse, any Error>?
            var ended = false
            var task: HTTPClient.Task<Void>?
            var cancelled = false
        }

        private let state = Mutex(State())
        private let mapError: @Sendable (any Error) -> any Error
        private let reading: PausedReading
        let body: BackpressuredBody

        /// - Parameter limit: unread bytes past which the socket is no longer read.
        init(limit: Int, mappingErrors mapError: @escaping @Sendable (any Error) -> any Error) {
            self.mapError = mapError
            reading = PausedReading()
            body = BackpressuredBody(task: reading, limit: limit, pauses: true)
        }

        /// Whether the request is over: complete, failed or cancelled.
        var hasEnded: Bool { state.withLock { $0.ended } }

        /// Starts `execute` (which returns the request's task) and waits for the answer's head.
        func response(starting execute: () -> HTTPClient.Task<Void>) async throws -> TransportResponse {
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    let cancelled = state.withLock { state in
                        state.headWaiter = continuation
                        return state.cancelled
                    }
                    if cancelled {
                        fail(CancellationError())
                        return
                    }
                    let task = execute()
                    reading.attach(task)
                    let cancelledMeanwhile = state.withLock { state in
                        state.task = task
                        return state.cancelled
                    }
                    if cancelledMeanwhile { task.cancel() }
                    // Whatever ends the request, the waiters hear of it (a failure the delegate was not told of,
                    // too).
                    task.futureResult.whenComplete { result in
                        switch result {
                        case .success: self.finish()
                        case .failure(let error): self.fail(error)
                        }
                    }
                }
            } onCancel: {
                let task = state.withLock { state in
                    state.cancelled = true
                    return state.task
                }
                task?.cancel()
            }
        }

        func didReceiveHead(task: HTTPClient.Task<Void>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
            let handle = StreamedBodyHandle(body: body)
            let answer = TransportResponse(
                status: Int(head.status.code), headers: head.headers.map { (name: $0.name, value: $0.value) },
                body: TransportBody(makeNext: { { try await handle.next() } }))
            let waiter = state.withLock { state -> CheckedContinuation<TransportResponse, any Error>? in
                defer { state.headWaiter = nil }
                return state.headWaiter
            }
            waiter?.resume(returning: answer)
            return task.eventLoop.makeSucceededVoidFuture()
        }

        func didReceiveBodyPart(task: HTTPClient.Task<Void>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
            body.received(BodyChunk(buffer))
            return reading.afterReceiving(on: task.eventLoop)
        }

        func didReceiveError(task: HTTPClient.Task<Void>, _ error: any Error) {
            fail(error)
        }

        func didFinishRequest(task: HTTPClient.Task<Void>) throws {
            finish()
        }

        /// The body is complete.
        private func finish() {
            let first = state.withLock { state in
                defer { state.ended = true }
                return !state.ended
            }
            if first { body.completed(nil) }
            letGoOfTheTask()
        }

        /// The request failed: before the head, `send` throws; after it, the body's reader does.
        private func fail(_ error: any Error) {
            let (first, waiter) = state.withLock {
                state -> (Bool, CheckedContinuation<TransportResponse, any Error>?) in
                defer {
                    state.ended = true
                    state.headWaiter = nil
                }
                return (!state.ended, state.headWaiter)
            }
            // `send` names a failure before the head itself (it knows the proxy); the body's reader gets it named.
            waiter?.resume(throwing: error)
            if first { body.completed(mapError(error)) }
            letGoOfTheTask()
        }

        /// The request is over: async-http-client's task holds this delegate (through its request, for good), so
        /// holding the task past the end would keep both, and whatever the body still held, alive.
        private func letGoOfTheTask() {
            state.withLock { $0.task = nil }
            reading.detach()
        }
    }

    /// The reading side of ``BackpressuredBody`` for async-http-client: pausing leaves the future of the next body
    /// part pending, resuming completes it, cancelling cancels the request (which closes its connection).
    ///
    /// A pending future must not outlive the request: async-http-client's callback on it holds the request, which
    /// holds the delegate, which holds this, so a future left pending keeps all of them, and the body's buffers, for
    /// good. Cancelling and the request's end complete it, and no future is left pending after either.
    private final class PausedReading: PausableTask {
        private struct State {
            var paused = false
            var resumption: EventLoopPromise<Void>?
            var task: HTTPClient.Task<Void>?
            /// Cancelled, or the request ended.
            var over = false
        }

        private let state = Mutex(State())

        func attach(_ task: HTTPClient.Task<Void>) {
            let cancelled = state.withLock { state in
                if !state.over { state.task = task }
                return state.over
            }
            if cancelled { task.cancel() }
        }

        /// The request ended: nothing is left to pause or cancel.
        func detach() {
            let resumption = state.withLock { state in
                state.over = true
                state.task = nil
                defer { state.resumption = nil }
                return state.resumption
            }
            resumption?.fail(CancellationError())
        }

        /// What `didReceiveBodyPart` returns: done at once unless the body just paused, else when it resumes.
        func afterReceiving(on eventLoop: any EventLoop) -> EventLoopFuture<Void> {
            state.withLock { state in
                if state.over { return eventLoop.makeFailedFuture(CancellationError()) }
                guard state.paused else { return eventLoop.makeSucceededVoidFuture() }
                let promise = state.resumption ?? eventLoop.makePromise(of: Void.self)
                state.resumption = promise
                return promise.futureResult
            }
        }

        func suspend() { state.withLock { $0.paused = true } }

        func resume() {
            let resumption = state.withLock { state in
                state.paused = false
                defer { state.resumption = nil }
                return state.resumption
            }
            // Completed from its event loop's queue, never inline: this runs under the body's lock, and the
            // promise's callbacks lead to the next `didReceiveBodyPart`, which takes that lock.
            if let resumption { resumption.futureResult.eventLoop.execute { resumption.succeed() } }
        }

        func cancel() {
            let (task, resumption) = state.withLock { state in
                state.over = true
                defer {
                    state.task = nil
                    state.resumption = nil
                }
                return (state.task, state.resumption)
            }
            task?.cancel()
            resumption?.fail(CancellationError())
        }
    }

    /// Lives as long as the response's body can still be read; dropping it unread cancels the request, which
    /// closes its connection (a paused one would otherwise stay open, half read, for good).
    private final class StreamedBodyHandle: Sendable {
        let body: BackpressuredBody
        init(body: BackpressuredBody) { self.body = body }
        func next() async throws -> BodyChunk? { try await body.next() }
        deinit { body.abandon() }
    }
#endif
