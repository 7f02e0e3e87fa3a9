import Foundation
import ModelDepotCore

extension DownloadRun {
    /// Fetches one segment, retrying from where it stopped, until the segment is written or retries run out.
    func fetch(segment: SegmentScheduler.Segment, file: any PartialFile, response: TransportResponse?)
        async throws
    {
        defer {
            flow.withLock { $0.segmentEnded(segment.id) }
            signal.notify()
        }
        var pending = response
        var lastCursor: Int64?
        let position = { self.flow.withLock { $0.position(of: segment.id) } }
        try await withRetries(progressMade: {
            let now = position()?.from
            defer { lastCursor = now }
            return (now ?? 0) > (lastCursor ?? Int64.max)
        }) {
            guard let (from, end) = position(), from < end else { return }
            if lastCursor == nil { lastCursor = from }
            let first = pending
            pending = nil
            try await self.withStallWatchdog { counter in
                let answer: TransportResponse
                if let first {
                    answer = first
                } else {
                    let ifRange = self.flow.withLock { $0.validators.ifRangeValue }
                    answer = try await self.send(range: from..<end, ifRange: ifRange, watched: true)
                }
                self.logger.trace("answer", metadata: ["status": "\(answer.status)", "from": "\(from)"])
                guard try self.flow.withLock({ try $0.checkRangedAnswer(DownloadFlow.Answer(answer), from: from) })
                else {
                    throw self.statusError(answer)
                }
                try await self.receive(answer.body, segment: segment.id, from: from, file: file, counter: counter)
            }
        }
    }

    /// Writes a 206 body at its offsets until the segment's (possibly shortened) end.
    private func receive(
        _ body: TransportBody, segment: Int, from start: Int64, file: any PartialFile, counter: ProgressCounter
    ) async throws {
        var offset = start
        for try await chunk in body {
            guard let end = flow.withLock({ $0.end(of: segment) }) else { return }
            let usable = Int(min(Int64(chunk.count), end - offset))
            if usable > 0 {
                try await store(chunk, count: usable, at: offset, in: file, counter: counter)
                hashWindow.offer(chunk, count: usable, at: offset)
                counter.add(usable)
                recordWrite(segment: segment, range: offset..<(offset + Int64(usable)))
                offset += Int64(usable)
            }
            if offset >= end { return }
        }
        if let end = flow.withLock({ $0.end(of: segment) }), offset < end {
            throw ModelDepotError(
                .network,
                "The connection to \(request.url.host ?? "the server") closed after byte \(offset) of a range that ends at \(end)."
            )
        }
    }

    /// Books written bytes (the flow decides what they change), reports progress, and wakes or checkpoints as
    /// the flow asks.
    private func recordWrite(segment: Int, range: Range<Int64>) {
        let now = clock.elapsed()
        let (after, onDisk) = flow.withLock { flow in
            let after = flow.wrote(segment: segment, range, now: now)
            report(&flow, now: now, force: false)
            return (after, onDiskHandler == nil ? nil : flow.bytesOnDisk)
        }
        if let onDisk { onDiskHandler?(onDisk) }
        if after.wake { signal.notify() }
        if after.checkpoint { checkpoints.request { try? self.checkpoint() } }
    }

    /// Every byte any connection brings passes here on its way to disk: the first `count` bytes of `chunk`,
    /// written at `offset`, once the bandwidth cap (when there is one) lets them through.
    func store(
        _ chunk: BodyChunk, count: Int, at offset: Int64, in file: any PartialFile, counter: ProgressCounter
    ) async throws {
        if let limit = configuration.bandwidthLimit {
            do {
                try await limit.take(count) { counter.touch() }
            } catch {
                throw ModelDepotError.cancelled()
            }
        }
        try chunk.withUnsafeBytes { bytes in
            try file.write(UnsafeRawBufferPointer(rebasing: bytes[0..<count]), at: offset)
        }
    }
}
