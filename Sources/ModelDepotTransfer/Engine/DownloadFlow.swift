import Foundation
import ModelDepotCore

/// The decisions of one download run, as a state machine with no I/O: what to ask the server first, what its
/// answer means (parallel ranges, one stream, an empty file, a changed file), which range each connection
/// fetches next, what written bytes change (progress, checkpoints, who to wake), and where the bytes on disk
/// are. ``DownloadRun`` does the requests, the writes and the waiting around it, under one lock; tests drive
/// it with made-up answers and times.
struct DownloadFlow: Sendable {
    /// How the run moves the file, once the probe has answered.
    enum Mode: Equatable, Sendable {
        /// The probe has not answered yet.
        case probing
        /// Byte ranges over several connections (the server answered 206).
        case parallel
        /// One stream from the first byte (the server ignores `Range`).
        case singleStream
        /// The file is empty: nothing to fetch.
        case empty
    }

    /// The first request: a range that doubles as the probe.
    struct Probe: Equatable, Sendable {
        let range: Range<Int64>
        let ifRange: String?
    }

    /// The parts of an answer the flow judges.
    struct Answer: Equatable, Sendable {
        var status: Int
        var contentRange: ContentRange?
        var validators: ResourceValidators

        init(status: Int, contentRange: ContentRange? = nil, validators: ResourceValidators = ResourceValidators()) {
            self.status = status
            self.contentRange = contentRange
            self.validators = validators
        }

        init(_ response: TransportResponse) {
            self.init(
                status: response.status,
                contentRange: response.header("Content-Range").flatMap(ContentRange.init(header:)),
                validators: ResourceValidators(
                    etag: response.header("ETag"), lastModified: response.header("Last-Modified")))
        }
    }

    /// What to do after a 206 probe.
    struct ParallelStart: Equatable, Sendable {
        /// The file's size.
        let total: Int64
        /// Bytes the disk must still take (0 when resuming: the partial file already has its full size).
        let spaceNeeded: Int64
        /// Whether the partial file must be created at full size (a fresh start).
        let allocate: Bool
        /// The probe's own body serves this range, on the first connection.
        let probeSegment: SegmentScheduler.Segment?
    }

    /// What one connection does next.
    enum Step: Equatable, Sendable {
        case fetch(SegmentScheduler.Segment)
        /// Everything left is in flight; wait to be woken (a range may become worth stealing).
        case idle
        /// Above the concurrency target; wait until it rises.
        case parked
        case finished
    }

    /// What booking written bytes asks of the run.
    struct AfterWrite: Equatable, Sendable {
        /// Save the resume sidecar now.
        var checkpoint = false
        /// Wake waiting connections and the hasher.
        var wake = false
    }

    let url: URL
    let expectedSize: Int64?
    let configuration: DownloadConfiguration
    private(set) var mode = Mode.probing
    /// Where requests go: the original URL, or where it last redirected.
    private(set) var resolvedURL: URL
    private(set) var validators = ResourceValidators()
    private(set) var total: Int64?
    private(set) var controller: ConcurrencyController
    private(set) var phase = DownloadProgress.Phase.resolving
    private(set) var bytesReceived: Int64 = 0
    private(set) var bytesResumed: Int64 = 0
    private(set) var bytesCompleted: Int64 = 0
    private(set) var activeConnections = 0
    private(set) var sha256: String?
    private(set) var waiting: TransferWait?
    private var scheduler: SegmentScheduler?
    private var idleConnections = 0
    private var bytesSinceCheckpoint: Int64 = 0
    private var bytesSinceIdleCheck: Int64 = 0
    private var lastIdleCheck: Duration = .zero
    private var sampleBytes: Int64 = 0
    private var sampleStart: Duration = .zero
    private var hashedPrefixNotified: Int64 = 0
    /// Prefix growth that wakes the hasher: small, so the buffers it takes from memory are released (and reused
    /// by the transport) soon after they arrive.
    static let hasherWakeBytes: Int64 = 256 << 10
    private var lastEmit: Duration?
    private var speed = SpeedMeter()

    init(url: URL, expectedSize: Int64?, configuration: DownloadConfiguration) {
        self.url = url
        self.expectedSize = expectedSize
        self.configuration = configuration
        self.resolvedURL = url
        self.controller = ConcurrencyController(
            initial: configuration.initialConnections, maximum: configuration.maxConnections)
    }

    // MARK: The probe

    /// The first request: the first missing range of a resumed download, else the first segment.
    func probe(resuming record: ResumeRecord?) -> Probe {
        guard let record else { return Probe(range: 0..<configuration.segmentSize, ifRange: nil) }
        guard let gap = record.completed.gaps(upTo: record.totalSize).first else {
            return Probe(range: 0..<1, ifRange: record.validators.ifRangeValue)
        }
        let range = gap.lowerBound..<min(gap.upperBound, gap.lowerBound + configuration.segmentSize)
        return Probe(range: range, ifRange: record.validators.ifRangeValue)
    }

    /// Whether the probe's answer is one the flow can judge; any other status is the server's error.
    static func isProbeAnswer(_ status: Int) -> Bool { [200, 206, 416].contains(status) }

    /// Judges a 206 probe: the file's size, whether a saved partial download still matches it, and which
    /// range the probe's body serves.
    mutating func probeAnswered(
        ranged answer: Answer, requested: Range<Int64>, resuming record: ResumeRecord?, now: Duration
    ) throws -> ParallelStart {
        guard let total = answer.contentRange?.total, let served = answer.contentRange?.range,
            served.lowerBound == requested.lowerBound
        else {
            throw ModelDepotError(
                .protocolViolation, "\(url) answered 206 without a usable Content-Range for bytes \(requested).")
        }
        if let record, record.totalSize != total || record.validators.conflicts(with: answer.validators) {
            throw sourceChanged("its size or ETag differs from the saved partial download")
        }
        try checkExpectedSize(total)
        let done = record?.completed ?? ByteRangeSet()
        var scheduler = SegmentScheduler(
            total: total, segmentSize: configuration.segmentSize,
            minimumSteal: max(configuration.segmentSize / 8, 64 << 10), done: done)
        let first = scheduler.next(now: now)
        self.scheduler = scheduler
        self.total = total
        validators = record?.validators ?? answer.validators
        bytesResumed = done.count
        bytesCompleted = done.count
        sampleStart = now
        phase = .downloading
        mode = .parallel
        var probeSegment: SegmentScheduler.Segment?
        if case .assigned(let segment) = first {
            activeConnections = 1
            if segment.range.lowerBound == served.lowerBound { probeSegment = segment }
        }
        return ParallelStart(
            total: total, spaceNeeded: record == nil ? total : 0, allocate: record == nil, probeSegment: probeSegment)
    }

    /// Judges a 200 probe: the server ignores `Range`, so the file comes as one stream; a saved partial
    /// download cannot be continued that way.
    mutating func probeAnsweredWhole(resuming record: ResumeRecord?) throws {
        if record != nil { throw sourceChanged("the server no longer honours the saved byte ranges") }
        mode = .singleStream
    }

    /// Judges a 416 probe: only an empty file (`bytes */0`) is fine, and only on a fresh start.
    mutating func probeAnsweredUnsatisfiable(_ answer: Answer, resuming record: ResumeRecord?) throws {
        if record != nil { throw sourceChanged("the file on the server is shorter than before") }
        guard answer.contentRange?.total == 0 else {
            throw ModelDepotError(
                .protocolViolation, "\(url) answered 416 to a request for its first bytes; the server is misconfigured."
            )
        }
        try checkExpectedSize(0)
        total = 0
        mode = .empty
    }

    // MARK: Connections

    /// The next step of connection `index` (0-based): a range to fetch, idle, parked above the concurrency
    /// target, or finished.
    mutating func nextStep(connection index: Int, now: Duration) -> Step {
        // Mutated in place (`scheduler?.`): a copy taken out of the optional would make every call copy the
        // scheduler's ranges.
        guard scheduler?.isComplete == false else { return .finished }
        guard index < controller.target else { return .parked }
        switch scheduler?.next(now: now) ?? .finished {
        case .assigned(let segment):
            activeConnections += 1
            return .fetch(segment)
        case .wait:
            idleConnections += 1
            return .idle
        case .finished:
            return .finished
        }
    }

    /// An idle connection woke up; it asks for its next step again.
    mutating func idleEnded() { idleConnections -= 1 }

    /// Whether every byte is on disk.
    var isComplete: Bool { scheduler?.isComplete ?? (mode == .empty) }

    /// Whether connection `index` is above the concurrency target.
    func isParked(connection index: Int) -> Bool { index >= controller.target }

    /// Where segment `id` must fetch from and to: its cursor and its (possibly shortened) end; nil once it
    /// ended.
    func position(of id: Int) -> (from: Int64, end: Int64)? {
        guard let from = scheduler?.cursor(of: id), let end = scheduler?.end(of: id) else { return nil }
        return (from, end)
    }

    /// The current end of segment `id` (another connection may steal its tail); nil once it ended.
    func end(of id: Int) -> Int64? { scheduler?.end(of: id) }

    /// Segment `id` ended, finished or not: what it did not write becomes available again.
    mutating func segmentEnded(_ id: Int) {
        scheduler?.release(id: id)
        activeConnections -= 1
    }

    /// Judges the answer to a later range request: only a 206 for the same version of the file, starting at
    /// `from`, may be written. False when the status is not one the flow judges (the caller reports the
    /// server's error); throws `sourceChanged` when the file changed.
    func checkRangedAnswer(_ answer: Answer, from: Int64) throws -> Bool {
        switch answer.status {
        case 206: break
        case 200: throw sourceChanged("a range request was answered with the whole file")
        case 416: throw sourceChanged("the server says the saved byte ranges no longer exist")
        default: return false
        }
        guard let contentRange = answer.contentRange, contentRange.total == total,
            contentRange.range?.lowerBound == from
        else { throw sourceChanged("a range came back with a different size or offset") }
        if validators.conflicts(with: answer.validators) { throw sourceChanged("its ETag changed") }
        return true
    }

    // MARK: Bytes

    /// Books bytes written for segment `id`: the scheduler, the counters, the concurrency controller's
    /// throughput sample, and whether a checkpoint is due or waiting connections should look again.
    mutating func wrote(segment id: Int, _ range: Range<Int64>, now: Duration) -> AfterWrite {
        guard scheduler?.recordWrite(id: id, range) != nil else { return AfterWrite() }
        let count = range.upperBound - range.lowerBound
        bytesReceived += count
        bytesCompleted += count
        bytesSinceCheckpoint += count
        sampleBytes += count
        var after = AfterWrite()
        if sampleBytes >= configuration.segmentSize / 2, now - sampleStart >= .milliseconds(50) {
            let before = controller.target
            controller.record(throughput: Double(sampleBytes) / (now - sampleStart).seconds)
            after.wake = controller.target != before
            sampleBytes = 0
            sampleStart = now
        }
        let prefix = hashablePrefix
        if prefix - hashedPrefixNotified >= Self.hasherWakeBytes || prefix == total {
            hashedPrefixNotified = prefix
            after.wake = true
        }
        // Idle connections re-check for a slow range to take over as the others' pace becomes known.
        bytesSinceIdleCheck += count
        if idleConnections > 0 && (bytesSinceIdleCheck >= 256 << 10 || now - lastIdleCheck >= .milliseconds(250)) {
            bytesSinceIdleCheck = 0
            lastIdleCheck = now
            after.wake = true
        }
        if bytesSinceCheckpoint >= configuration.checkpointBytes {
            bytesSinceCheckpoint = 0
            after.checkpoint = true
        }
        return after
    }

    /// The byte ranges on disk: what a reader may already serve of a file still downloading.
    var bytesOnDisk: ByteRangeSet {
        if let scheduler { return scheduler.done }
        guard mode == .singleStream, bytesCompleted > 0 else { return ByteRangeSet() }
        var written = ByteRangeSet()
        written.insert(0..<bytesCompleted)
        return written
    }

    /// The end of the contiguous prefix on disk, which the streaming hasher may read up to.
    var hashablePrefix: Int64 { scheduler?.done.prefixEnd ?? 0 }

    /// The single stream starts over from byte 0 (a retry cannot resume a stream without ranges).
    mutating func streamStarted(total: Int64?) throws {
        if let total { try checkExpectedSize(total) }
        self.total = total
        bytesCompleted = 0
        phase = .downloading
        activeConnections = 1
    }

    /// Bytes of the single stream written at the end of the file.
    mutating func streamed(_ count: Int) {
        bytesReceived += Int64(count)
        bytesCompleted += Int64(count)
    }

    /// The single stream ended after `size` bytes whose SHA-256 is `digest`.
    mutating func streamEnded(size: Int64, digest: String) throws {
        activeConnections = 0
        if let total, size < total {
            throw ModelDepotError(
                .network, "The connection to \(url.host ?? "the server") closed after \(size) of \(total) bytes.")
        }
        try checkExpectedSize(size)
        total = size
        sha256 = digest
    }

    /// The streaming hasher reached the end of the file.
    mutating func hashed(_ digest: String) { sha256 = digest }

    // MARK: Redirects and refused URLs

    /// A redirect led to `target`: later ranges go straight there.
    mutating func redirected(to target: URL) { resolvedURL = target }

    /// The server a redirect led to refused access (a signed URL expired): the next attempt asks the
    /// original URL for a fresh one.
    mutating func urlRefused() { resolvedURL = url }

    /// A failure the connection controller counts (fewer connections after errors and 429s).
    mutating func requestFailed() { controller.recordFailure() }

    // MARK: The resume record and progress

    /// The sidecar to save: what is on disk, for this version of the file; nil before the file's size is known.
    /// `key` names the content the partial file holds (the URL unless the request gives a resume key).
    func resumeRecord(expectedSHA256: String?, key: String? = nil) -> ResumeRecord? {
        guard let total, let scheduler else { return nil }
        return ResumeRecord(
            url: key ?? url.absoluteString, totalSize: total, validators: validators, completed: scheduler.done,
            expectedSHA256: expectedSHA256)
    }

    /// Moves to `phase`.
    mutating func enter(_ phase: DownloadProgress.Phase) { self.phase = phase }

    /// Notes that the run waits (nil: no longer); false when nothing changed.
    mutating func wait(_ waiting: TransferWait?) -> Bool {
        guard self.waiting != waiting else { return false }
        self.waiting = waiting
        return true
    }

    /// The progress to report now: always when forced, else at most every progress interval.
    mutating func progress(now: Duration, force: Bool) -> DownloadProgress? {
        if !force, let last = lastEmit, now - last < configuration.progressInterval { return nil }
        lastEmit = now
        let rate = speed.record(elapsed: now, bytes: bytesCompleted - bytesResumed)
        var eta: Double?
        if let total, rate > 0 { eta = Double(total - bytesCompleted) / rate }
        var progress = DownloadProgress(
            phase: phase, bytesCompleted: bytesCompleted, totalBytes: total, bytesPerSecond: rate,
            estimatedSecondsRemaining: eta, activeConnections: activeConnections, waiting: waiting)
        progress.bytesResumed = bytesResumed
        return progress
    }

    // MARK: Checks

    func checkExpectedSize(_ total: Int64) throws {
        if let expectedSize, expectedSize != total {
            throw ModelDepotError(
                .sizeMismatch,
                "\(url) is \(total) bytes but \(expectedSize) were expected. Check the URL, or update the expected size."
            )
        }
    }

    func sourceChanged(_ reason: String) -> ModelDepotError {
        ModelDepotError(.sourceChanged, "\(url) changed on the server during the download (\(reason)).")
    }
}
