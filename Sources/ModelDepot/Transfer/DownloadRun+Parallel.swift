import Foundation
import NIOCore
import Synchronization

extension DownloadRun {
    /// Sets up the partial file from the probe's 206 and runs the connections and the hasher together.
    func startParallel(
        probe: TransportResponse, requested: Range<Int64>, record: ResumeRecord?, file: any PartialFile
    ) async throws {
        guard let contentRange = probe.header("Content-Range").flatMap(ContentRange.init(header:)),
            let total = contentRange.total, let served = contentRange.range,
            served.lowerBound == requested.lowerBound
        else {
            throw ModelDepotError(
                .protocolViolation, "\(request.url) answered 206 without a usable Content-Range for bytes \(requested)."
            )
        }
        let answered = ResourceValidators(etag: probe.header("ETag"), lastModified: probe.header("Last-Modified"))
        if let record, record.totalSize != total || record.validators.conflicts(with: answered) {
            throw sourceChanged("its size or ETag differs from the saved partial download")
        }
        try checkExpectedSize(total)
        let done = record?.completed ?? ByteRangeSet()
        if record == nil {
            try checkDiskSpace(needed: total)
            try file.allocate(size: total)
        }
        let validators = record?.validators ?? answered
        var scheduler = SegmentScheduler(
            total: total, segmentSize: configuration.segmentSize,
            minimumSteal: max(configuration.segmentSize / 8, 64 << 10), done: done)
        let start = clock.elapsed()
        let first = scheduler.next(now: start)
        state.withLock { state in
            state.total = total
            state.validators = validators
            state.bytesResumed = done.count
            state.bytesCompleted = done.count
            state.sampleStart = start
            state.scheduler = scheduler
            state.phase = .downloading
            if case .assigned = first { state.activeConnections = 1 }
        }
        try checkpoint()
        emit(force: true)
        var probeSegment: (SegmentScheduler.Segment, TransportResponse)?
        if case .assigned(let segment) = first, segment.range.lowerBound == served.lowerBound {
            probeSegment = (segment, probe)
        }
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                let probeJob = probeSegment
                group.addTask { try await self.connection(index: 0, file: file, first: probeJob) }
                for index in 1..<max(1, configuration.maxConnections) {
                    group.addTask {
                        do { try await self.connection(index: index, file: file, first: nil) } catch {
                            self.logger.trace(
                                "connection failed", metadata: ["connection": "\(index)", "error": "\(error)"])
                            throw error
                        }
                    }
                }
                group.addTask {
                    do { try await self.followWithHasher(file: file) } catch {
                        self.logger.trace("hasher failed", metadata: ["error": "\(error)"])
                        throw error
                    }
                }
                // next() rethrows the first failure at once; leaving the body then cancels the other children
                // (waitForAll would wait for all of them first).
                while try await group.next() != nil {}
            }
        } catch {
            logger.trace("parallel phase ended", metadata: ["error": "\(error)"])
            let failure = Self.classify(error)
            if failure.code != .sourceChanged { try? checkpoint() }
            throw failure
        }
    }

    /// One connection's loop: take a range, fetch it, repeat; wait while the concurrency target is below
    /// this connection's index.
    private func connection(
        index: Int, file: any PartialFile, first: (SegmentScheduler.Segment, TransportResponse)?
    ) async throws {
        if let (segment, response) = first {
            try await fetch(segment: segment, file: file, response: response)
        }
        enum Decision {
            case run(SegmentScheduler.Segment)
            /// Nothing to take right now; counted as idle so that writers wake it to look for a slow range.
            case wait
            /// Above the concurrency target: sleeps until the target or the scheduler changes.
            case parked
            case finished
        }
        while true {
            try Task.checkCancellation()
            let seen = signal.generation
            let now = clock.elapsed()
            let decision = state.withLock { state -> Decision in
                if state.scheduler!.isComplete { return .finished }
                guard index < state.controller.target else { return .parked }
                switch state.scheduler!.next(now: now) {
                case .assigned(let segment):
                    state.activeConnections += 1
                    return .run(segment)
                case .wait:
                    state.idleConnections += 1
                    return .wait
                case .finished: return .finished
                }
            }
            defer { if case .wait = decision { state.withLock { $0.idleConnections -= 1 } } }
            switch decision {
            case .run(let segment):
                logger.trace("segment", metadata: ["connection": "\(index)", "range": "\(segment.range)"])
                try await fetch(segment: segment, file: file, response: nil)
            case .wait, .parked: await signal.wait(after: seen)
            case .finished:
                logger.trace("connection done", metadata: ["connection": "\(index)"])
                return
            }
        }
    }

    /// Fetches one segment, retrying from where it stopped, until the segment is written or retries run out.
    private func fetch(segment: SegmentScheduler.Segment, file: any PartialFile, response: TransportResponse?)
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
                    answer = try await self.send(range: from..<end, ifRange: ifRange)
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
        default: throw HTTPStatusError.error(for: answer, url: request.url)
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
        if saveCheckpoint { try? checkpoint() }
    }

    /// Hashes the contiguous prefix as it grows; finishes when the whole file is hashed.
    func followWithHasher(file: any PartialFile) async throws {
        let hasher = PrefixHasher()
        while true {
            try Task.checkCancellation()
            let seen = signal.generation
            let (prefix, total) = state.withLock { ($0.scheduler!.done.prefixEnd, $0.total ?? 0) }
            if hasher.offset < prefix {
                try hasher.catchUp(to: min(prefix, hasher.offset + (64 << 20)), in: file)
                continue
            }
            if hasher.offset >= total {
                let digest = hasher.finalize()
                state.withLock { $0.sha256 = digest }
                return
            }
            await signal.wait(after: seen)
        }
    }

    /// Saves the resume sidecar with the ranges written so far.
    func checkpoint() throws {
        try checkpointLock.withLock { _ in
            let record = state.withLock { state -> ResumeRecord? in
                guard let total = state.total, let scheduler = state.scheduler else { return nil }
                return ResumeRecord(
                    url: request.url.absoluteString, totalSize: total, validators: state.validators,
                    completed: scheduler.done, expectedSHA256: request.expectedSHA256)
            }
            try record?.save(to: request.resumeRecordPath)
        }
    }
}

/// Bytes seen by one request, read by its stall watchdog.
final class ProgressCounter: Sendable {
    private let value = Mutex<Int64>(0)
    func add(_ count: Int) { value.withLock { $0 += Int64(count) } }
    var current: Int64 { value.withLock { $0 } }
}
