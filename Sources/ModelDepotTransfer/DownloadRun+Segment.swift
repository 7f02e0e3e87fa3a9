import Foundation
import ModelDepotCore
import NIOCore

extension DownloadRun {
    /// Fetches one segment, retrying from where it stopped, until the segment is written or retries run out.
    func fetch(segment: SegmentScheduler.Segment, file: any PartialFile, response: TransportResponse?)
        async throws
    {
        defer {
            state.withLock { state in
                state.scheduler!.release(id: segment.id)
                state.activeConnections -= 1
            }
            signal.notify()
        }
        var pending = response
        var lastCursor: Int64?
        let position = {
            self.state.withLock { ($0.scheduler!.cursor(of: segment.id), $0.scheduler!.end(of: segment.id)) }
        }
        try await withRetries(progressMade: {
            let now = position().0
            defer { lastCursor = now }
            return (now ?? 0) > (lastCursor ?? Int64.max)
        }) {
            guard let from = position().0, let end = position().1, from < end else { return }
            if lastCursor == nil { lastCursor = from }
            let first = pending
            pending = nil
            try await self.withStallWatchdog { counter in
                let answer: TransportResponse
                if let first {
                    answer = first
                } else {
                    let ifRange = self.state.withLock { $0.validators.ifRangeValue }
                    answer = try await self.send(range: from..<end, ifRange: ifRange, watched: true)
                }
                self.logger.trace("answer", metadata: ["status": "\(answer.status)", "from": "\(from)"])
                try self.checkRangedAnswer(answer, from: from)
                try await self.receive(answer.body, segment: segment.id, from: from, file: file, counter: counter)
            }
        }
    }

    /// Rejects anything but a 206 for the same version of the file starting at `from`.
    private func checkRangedAnswer(_ answer: TransportResponse, from: Int64) throws {
        switch answer.status {
        case 206: break
        case 200: throw sourceChanged("a range request was answered with the whole file")
        case 416: throw sourceChanged("the server says the saved byte ranges no longer exist")
        default: throw statusError(answer)
        }
        let (total, validators) = state.withLock { ($0.total, $0.validators) }
        let answered = ResourceValidators(etag: answer.header("ETag"), lastModified: answer.header("Last-Modified"))
        guard let contentRange = answer.header("Content-Range").flatMap(ContentRange.init(header:)),
            contentRange.total == total, contentRange.range?.lowerBound == from
        else { throw sourceChanged("a range came back with a different size or offset") }
        if validators.conflicts(with: answered) { throw sourceChanged("its ETag changed") }
    }

    /// Writes a 206 body at its offsets until the segment's (possibly shortened) end.
    private func receive(
        _ body: TransportBody, segment: Int, from start: Int64, file: any PartialFile, counter: ProgressCounter
    ) async throws {
        var offset = start
        for try await buffer in body {
            guard let end = state.withLock({ $0.scheduler!.end(of: segment) }) else { return }
            let usable = Int(min(Int64(buffer.readableBytes), end - offset))
            if usable > 0 {
                try buffer.withUnsafeReadableBytes { bytes in
                    try file.write(UnsafeRawBufferPointer(rebasing: bytes[0..<usable]), at: offset)
                }
                counter.add(usable)
                recordWrite(segment: segment, range: offset..<(offset + Int64(usable)))
                offset += Int64(usable)
            }
            if offset >= end { return }
        }
        if let end = state.withLock({ $0.scheduler!.end(of: segment) }), offset < end {
            throw ModelDepotError(
                .network,
                "The connection to \(request.url.host ?? "the server") closed after byte \(offset) of a range that ends at \(end)."
            )
        }
    }

    /// Books written bytes: the scheduler, counters, the concurrency controller, checkpoints and progress.
    private func recordWrite(segment: Int, range: Range<Int64>) {
        let count = range.upperBound - range.lowerBound
        let now = clock.elapsed()
        let (saveCheckpoint, wake) = state.withLock { state -> (Bool, Bool) in
            state.scheduler!.recordWrite(id: segment, range)
            state.bytesReceived += count
            state.bytesCompleted += count
            state.bytesSinceCheckpoint += count
            state.sampleBytes += count
            var wake = false
            if state.sampleBytes >= configuration.segmentSize / 2, now - state.sampleStart >= .milliseconds(50) {
                let seconds = (now - state.sampleStart).timeInterval
                let before = state.controller.target
                state.controller.record(throughput: Double(state.sampleBytes) / seconds)
                wake = state.controller.target != before
                state.sampleBytes = 0
                state.sampleStart = now
            }
            let prefix = state.scheduler!.done.prefixEnd
            if prefix - state.hashedPrefixNotified >= 4 << 20 || prefix == state.total {
                state.hashedPrefixNotified = prefix
                wake = true
            }
            // Idle connections re-check for a slow range to take over as the others' pace becomes known.
            state.bytesSinceIdleCheck += count
            if state.idleConnections > 0
                && (state.bytesSinceIdleCheck >= 256 << 10 || now - state.lastIdleCheck >= .milliseconds(250))
            {
                state.bytesSinceIdleCheck = 0
                state.lastIdleCheck = now
                wake = true
            }
            emitLocked(&state, now: now, force: false)
            guard state.bytesSinceCheckpoint >= configuration.checkpointBytes else { return (false, wake) }
            state.bytesSinceCheckpoint = 0
            return (true, wake)
        }
        if wake { signal.notify() }
        if saveCheckpoint { checkpoints.request { try? self.checkpoint() } }
    }

}
