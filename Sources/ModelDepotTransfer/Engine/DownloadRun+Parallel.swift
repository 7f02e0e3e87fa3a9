import Foundation
import ModelDepotCore
import Synchronization

extension DownloadRun {
    /// Sets up the partial file from the probe's 206 and runs the connections and the hasher together.
    func startParallel(
        probe: TransportResponse, requested: Range<Int64>, record: ResumeRecord?, file: any PartialFile
    ) async throws {
        let now = clock.elapsed()
        let start = try flow.withLock {
            try $0.probeAnswered(ranged: DownloadFlow.Answer(probe), requested: requested, resuming: record, now: now)
        }
        try checkDiskSpace(needed: start.spaceNeeded)
        if start.allocate { try file.allocate(size: start.total) }
        try checkpoint()
        emit(force: true)
        let probeSegment = start.probeSegment.map { ($0, probe) }
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await self.connection(index: 0, file: file, first: probeSegment) }
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
        let budget = index > 0 ? configuration.connectionBudget : nil
        while true {
            try Task.checkCancellation()
            let seen = signal.generation
            // Beyond the first connection, a shared budget decides whether this one may open at all.
            if let budget {
                let budgetSeen = budget.signal.generation
                let (complete, parked) = flow.withLock { ($0.isComplete, $0.isParked(connection: index)) }
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
            let step = flow.withLock { $0.nextStep(connection: index, now: now) }
            let fetching = if case .fetch = step { true } else { false }
            if permitHeld && !fetching {
                // Not fetching: give the permit back before waiting, so another download can use it.
                budget?.release()
                permitHeld = false
            }
            switch step {
            case .fetch(let segment):
                logger.trace("segment", metadata: ["connection": "\(index)", "range": "\(segment.range)"])
                try await fetch(segment: segment, file: file, response: nil)
            case .idle:
                await signal.wait(after: seen)
                flow.withLock { $0.idleEnded() }
            case .parked:
                await signal.wait(after: seen)
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
            let (prefix, total) = flow.withLock { ($0.hashablePrefix, $0.total ?? 0) }
            if hasher.offset < prefix {
                // A few milliseconds of hashing per step, so a cancelled download stops soon.
                let end = min(prefix, hasher.offset + (8 << 20))
                try await hashing.run { try hasher.catchUp(to: end, in: file, window: self.hashWindow) }
                continue
            }
            if hasher.offset >= total {
                let digest = hasher.finalize()
                let (fromMemory, readBack) = hashWindow.sources
                logger.debug(
                    "hashed", metadata: ["from memory": "\(fromMemory)", "read back": "\(readBack)"])
                flow.withLock { $0.hashed(digest) }
                return
            }
            await signal.wait(after: seen)
        }
    }

    /// Saves the resume sidecar with the ranges written so far.
    func checkpoint() throws {
        try resumeRecordFile.withLock { file in
            let record = flow.withLock {
                $0.resumeRecord(expectedSHA256: request.expectedSHA256, key: request.resumeIdentity)
            }
            if let record { try file.save(record) }
        }
    }
}

/// Bytes seen by one request, read by its stall watchdog.
final class ProgressCounter: Sendable {
    private let value = Mutex<Int64>(0)
    private let waits = Mutex(0)
    func add(_ count: Int) { value.withLock { $0 += Int64(count) } }
    /// A request of this connection started (true) or stopped (false) waiting for a per-host permit.
    func setWaiting(_ waiting: Bool) {
        waits.withLock { $0 += waiting ? 1 : -1 }
        touch()
    }
    /// True while a request waits for a per-host permit: not stalled, since nothing was asked of the server yet.
    var isWaiting: Bool { waits.withLock { $0 > 0 } }
    /// Counts as activity without bytes: a connection held back by the bandwidth cap is not stalled.
    func touch() { value.withLock { $0 += 1 } }
    /// Changes whenever bytes arrive or the connection is touched; the stall watchdog compares it over time.
    var current: Int64 { value.withLock { $0 } }
}
