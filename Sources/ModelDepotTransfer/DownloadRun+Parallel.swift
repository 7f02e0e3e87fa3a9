import Foundation
import ModelDepotCore
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
                    group.addTask { try await self.connection(index: index, file: file, first: nil) }
                }
                group.addTask { try await self.followWithHasher(file: file) }
                // next() rethrows the first failure at once; leaving the body then cancels the other children
                // (waitForAll would wait for all of them first).
                while try await group.next() != nil {}
            }
            await checkpoints.close()
        } catch {
            logger.trace("parallel phase ended", metadata: ["error": "\(error)"])
            // No background save may land after this: a restart (the file changed) deletes the sidecar
            // and the next run writes its own.
            await checkpoints.close()
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
        let budget = index > 0 ? configuration.connectionBudget : nil
        while true {
            try Task.checkCancellation()
            let seen = signal.generation
            // Beyond the first connection, a shared budget decides whether this one may open at all.
            if let budget {
                let budgetSeen = budget.signal.generation
                let (complete, parked) = state.withLock { ($0.scheduler!.isComplete, index >= $0.controller.target) }
                if complete { return }
                if parked {
                    await signal.wait(after: seen)
                    continue
                }
                guard budget.tryAcquire() else {
                    await waitForEither(signal, after: seen, budget.signal, after: budgetSeen)
                    continue
                }
            }
            var permitHeld = budget != nil
            defer { if permitHeld { budget?.release() } }
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
            let fetching = if case .run = decision { true } else { false }
            if permitHeld && !fetching {
                // Not fetching: give the permit back before waiting, so another download can use it.
                budget?.release()
                permitHeld = false
            }
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

    /// Hashes the contiguous prefix as it grows; finishes when the whole file is hashed.
    func followWithHasher(file: any PartialFile) async throws {
        let hasher = PrefixHasher()
        let hashing = BlockingWorkQueue(label: "ModelDepot.hasher")
        while true {
            try Task.checkCancellation()
            let seen = signal.generation
            let (prefix, total) = state.withLock { ($0.scheduler!.done.prefixEnd, $0.total ?? 0) }
            if hasher.offset < prefix {
                // A few milliseconds of hashing per step, so a cancelled download stops soon.
                let end = min(prefix, hasher.offset + (8 << 20))
                try await hashing.run { try hasher.catchUp(to: end, in: file) }
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
        try resumeRecordFile.withLock { file in
            let record = state.withLock { state -> ResumeRecord? in
                guard let total = state.total, let scheduler = state.scheduler else { return nil }
                return ResumeRecord(
                    url: request.url.absoluteString, totalSize: total, validators: state.validators,
                    completed: scheduler.done, expectedSHA256: request.expectedSHA256)
            }
            if let record { try file.save(record) }
        }
    }
}

/// Bytes seen by one request, read by its stall watchdog.
final class ProgressCounter: Sendable {
    private let value = Mutex<Int64>(0)
    func add(_ count: Int) { value.withLock { $0 += Int64(count) } }
    var current: Int64 { value.withLock { $0 } }
}
