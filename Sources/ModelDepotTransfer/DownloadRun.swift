import Foundation
import Logging
import ModelDepotCore
import Synchronization

/// One attempt at a download, from the first request to the rename into place.
///
/// The first ranged request doubles as the probe: its answer tells whether the server does ranges (206),
/// the size, and the validators. A 206 leads to the parallel path (``DownloadRun/runParallel``); a 200 to a
/// single stream. A run that finds the file changed on the server throws `sourceChanged` and the
/// ``Downloader`` starts a fresh run.
final class DownloadRun: Sendable {
    struct State {
        var resolvedURL: URL
        var validators = ResourceValidators()
        var total: Int64?
        var scheduler: SegmentScheduler?
        var controller: ConcurrencyController
        var phase: DownloadProgress.Phase = .resolving
        var bytesReceived: Int64 = 0
        var bytesResumed: Int64 = 0
        var bytesCompleted: Int64 = 0
        var bytesSinceCheckpoint: Int64 = 0
        var activeConnections = 0
        var idleConnections = 0
        var bytesSinceIdleCheck: Int64 = 0
        var lastIdleCheck: Duration = .zero
        var lastEmit: Duration?
        var speed = SpeedMeter()
        var sampleBytes: Int64 = 0
        var sampleStart: Duration = .zero
        var hashedPrefixNotified: Int64 = 0
        var sha256: String?
        var waiting: TransferWait?
    }

    let request: DownloadRequest
    let configuration: DownloadConfiguration
    let transport: any HTTPTransport
    package let fileSystem: any DownloadFileSystem
    let clock: EngineClock
    let logger: Logger
    let random: @Sendable () -> Double
    let progressHandler: @Sendable (DownloadProgress) -> Void
    let state: Mutex<State>
    let signal = ChangeSignal()
    /// The sidecar, behind a lock that serialises saves so an older snapshot never overwrites a newer one.
    let resumeRecordFile: Mutex<ResumeRecordFile>
    /// Saves the sidecar as the bytes come in, off the connections' threads.
    let checkpoints = CheckpointWriter()

    init(
        request: DownloadRequest, downloader: Downloader, clock: EngineClock,
        progress: @escaping @Sendable (DownloadProgress) -> Void
    ) {
        self.request = request
        self.configuration = downloader.configuration
        self.transport = downloader.transport
        self.fileSystem = downloader.fileSystem
        self.clock = clock
        self.logger = downloader.logger
        self.random = downloader.random
        self.progressHandler = progress
        let controller = ConcurrencyController(
            initial: downloader.configuration.initialConnections, maximum: downloader.configuration.maxConnections)
        self.state = Mutex(State(resolvedURL: request.url, controller: controller))
        self.resumeRecordFile = Mutex(ResumeRecordFile(path: request.resumeRecordPath))
    }

    func execute() async throws -> DownloadResult {
        emit(phase: .resolving)
        let record = usableResumeRecord()
        let file = try fileSystem.openPartialFile(atPath: request.partialPath)
        defer { file.close() }
        do {
            return try await execute(record: record, file: file)
        } catch {
            // A run that started afresh and wrote nothing leaves nothing: an empty `.incomplete` (after a 404, a
            // redirect loop, a garbage reply) is of no use to a later run.
            if record == nil, state.withLock({ $0.bytesReceived == 0 }) { Downloader.discardPartial(of: request) }
            throw error
        }
    }

    private func execute(record: ResumeRecord?, file: any PartialFile) async throws -> DownloadResult {
        if record == nil {
            unlink(request.resumeRecordPath)
            try file.allocate(size: 0)
        }
        let firstRange = record.map { firstMissingRange(of: $0) } ?? 0..<configuration.segmentSize
        let probe = try await withRetries(progressMade: { false }) {
            self.emit(waiting: .server(TransportFailure.serverName(self.state.withLock { $0.resolvedURL })))
            // Under the watchdog: a server that accepts the connection and never answers is given up on after
            // the stall timeout, not after the transport's minute-long read timeout.
            let answer = try await self.withStallWatchdog { _ in
                try await self.send(range: firstRange, ifRange: record?.validators.ifRangeValue)
            }
            guard [200, 206, 416].contains(answer.status) else {
                throw self.statusError(answer)
            }
            return answer
        }
        emit(waiting: nil)
        logger.trace("probe answered", metadata: ["status": "\(probe.status)", "range": "\(firstRange)"])
        switch probe.status {
        case 206:
            try await startParallel(probe: probe, requested: firstRange, record: record, file: file)
        case 200:
            if record != nil { throw sourceChanged("the server no longer honours the saved byte ranges") }
            try await runSingleStream(first: probe, file: file)
        case 416:
            try handleUnsatisfiableProbe(probe, record: record, file: file)
        default:
            throw statusError(probe)
        }
        return try finish(file: file)
    }

    /// The resume sidecar, when it describes the partial file beside it and this same request.
    private func usableResumeRecord() -> ResumeRecord? {
        guard let record = ResumeRecord.load(from: request.resumeRecordPath),
            record.url == request.url.absoluteString,
            record.expectedSHA256 == request.expectedSHA256,
            let attributes = try? FileManager.default.attributesOfItem(atPath: request.partialPath),
            (attributes[.size] as? NSNumber)?.int64Value == record.totalSize
        else { return nil }
        return record
    }

    private func firstMissingRange(of record: ResumeRecord) -> Range<Int64> {
        guard let gap = record.completed.gaps(upTo: record.totalSize).first else { return 0..<1 }
        return gap.lowerBound..<min(gap.upperBound, gap.lowerBound + configuration.segmentSize)
    }

    private func handleUnsatisfiableProbe(_ probe: TransportResponse, record: ResumeRecord?, file: any PartialFile)
        throws
    {
        let contentRange = probe.header("Content-Range").flatMap(ContentRange.init(header:))
        if record != nil { throw sourceChanged("the file on the server is shorter than before") }
        guard contentRange?.total == 0 else {
            throw ModelDepotError(
                .protocolViolation,
                "\(request.url) answered 416 to a request for its first bytes; the server is misconfigured.")
        }
        try checkExpectedSize(0)
        state.withLock { $0.total = 0 }
    }

    func checkExpectedSize(_ total: Int64) throws {
        if let expected = request.expectedSize, expected != total {
            throw ModelDepotError(
                .sizeMismatch,
                "\(request.url) is \(total) bytes but \(expected) were expected. Check the URL, or update the expected size."
            )
        }
    }

    /// Fails with `insufficientDiskSpace` unless the destination volume can take `needed` more bytes.
    func checkDiskSpace(needed: Int64) throws {
        guard needed > 0 else { return }
        let folder = request.destination.deletingLastPathComponent().path
        let available = try fileSystem.availableSpace(forPath: folder)
        guard available >= needed else {
            throw ModelDepotError(
                .insufficientDiskSpace,
                "Not enough disk space in \(folder): the download needs \(needed) more bytes but only \(available) are free. Free \(needed - available) bytes or choose another destination."
            )
        }
    }

    func sourceChanged(_ reason: String) -> ModelDepotError {
        ModelDepotError(.sourceChanged, "\(request.url) changed on the server during the download (\(reason)).")
    }

    /// Verifies what was downloaded and moves it into place.
    private func finish(file: any PartialFile) throws -> DownloadResult {
        emit(phase: .verifying)
        let (total, digest, received, resumed) = state.withLock {
            ($0.total ?? 0, $0.sha256, $0.bytesReceived, $0.bytesResumed)
        }
        let actualSize = try file.size()
        guard actualSize == total else {
            throw ModelDepotError(
                .sizeMismatch,
                "The partial file has \(actualSize) bytes where \(total) were expected. Run the download again.")
        }
        let sha256 = digest ?? PrefixHasher.emptyDigest
        if let expected = request.expectedSHA256, expected != sha256 {
            Downloader.discardPartial(of: request)
            throw ModelDepotError(
                .checksumMismatch,
                "The file from \(request.url) has SHA-256 \(sha256) but \(expected) was expected. Nothing was kept; check the expected hash, or try again if the server sent bad data."
            )
        }
        if let expected = request.expectedGitBlobID {
            let actual = try FileDigests.gitBlobID(ofFileAt: request.partialPath)
            if actual != expected {
                Downloader.discardPartial(of: request)
                throw ModelDepotError(
                    .checksumMismatch,
                    "The file from \(request.url) has git blob id \(actual) but \(expected) was expected. Nothing was kept; try again if the server sent bad data."
                )
            }
        }
        emit(phase: .finalizing)
        if configuration.syncBeforeRename { try file.sync() }
        // Verified: from owner-only (while partial) to what any new file gets, as Python leaves its blobs.
        chmod(request.partialPath, FileCreationMode.standard)
        guard rename(request.partialPath, request.destination.path) == 0 else {
            throw POSIXFailure.error("Cannot move the finished file to \(request.destination.path)", errno: errno)
        }
        unlink(request.resumeRecordPath)
        if configuration.syncBeforeRename { syncFolder(request.destination.deletingLastPathComponent().path) }
        emit(phase: .completed)
        return DownloadResult(
            file: request.destination, size: total, sha256: sha256, bytesReceived: received, bytesResumed: resumed,
            wasAlreadyPresent: false)
    }

    private func syncFolder(_ path: String) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        fsync(descriptor)
        close(descriptor)
    }
}
