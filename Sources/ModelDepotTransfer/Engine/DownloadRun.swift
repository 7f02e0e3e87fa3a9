import Foundation
import Logging
import ModelDepotCore
import Synchronization

/// One attempt at a download, from the first request to the rename into place: the I/O around a
/// ``DownloadFlow``, which makes every decision.
///
/// The first ranged request doubles as the probe: its answer tells whether the server does ranges (206),
/// the size, and the validators. A 206 leads to the parallel path (``DownloadRun/startParallel``); a 200 to a
/// single stream. A run that finds the file changed on the server throws `sourceChanged` and the
/// ``Downloader`` starts a fresh run.
final class DownloadRun: Sendable {
    let request: DownloadRequest
    let configuration: DownloadConfiguration
    let transport: any HTTPTransport
    package let fileSystem: any DownloadFileSystem
    let clock: EngineClock
    let logger: Logger
    let random: @Sendable () -> Double
    let progressHandler: @Sendable (DownloadProgress) -> Void
    /// Told the byte ranges on disk after every write, for a reader that serves the file while it arrives.
    let onDiskHandler: (@Sendable (ByteRangeSet) -> Void)?
    /// The run's state and decisions, behind the one lock.
    let flow: Mutex<DownloadFlow>
    /// Wakes connections and the hasher when the flow changes.
    let signal = ChangeSignal()
    /// The sidecar, behind a lock that serialises saves so an older snapshot never overwrites a newer one.
    let resumeRecordFile: Mutex<ResumeRecordFile>
    /// Saves the sidecar as the bytes come in, off the connections' threads.
    let checkpoints = CheckpointWriter()
    /// What connections wrote just past the hashed prefix, for the hasher to take from memory.
    let hashWindow = HashWindow(capacity: DownloadRun.hashWindowBytes)
    /// The most bytes held for the hasher. Measured on a 1 GiB loopback pull on this 2-core machine, where hashing
    /// (0.8 s/GiB of SHA-256) is slower than the link: with one connection the bytes arrive in order and nearly all
    /// are hashed from memory whatever the window; with the default connections they arrive out of order, the
    /// connections run ahead of the window, and most bytes are read back from the page cache (the `hashed` line
    /// of `--verbose`) with 4, 8 or 16 MiB alike, while the peak RSS grew with it: 58, 56–60 and 61–63 MiB. Each
    /// transport buffer counts at its full size, once (NIO hands over 64 KiB reads, 64 KiB each).
    static let hashWindowBytes: Int64 = 8 << 20

    init(
        request: DownloadRequest, downloader: Downloader, clock: EngineClock,
        progress: @escaping @Sendable (DownloadProgress) -> Void,
        onDisk: (@Sendable (ByteRangeSet) -> Void)? = nil
    ) {
        self.request = request
        self.configuration = downloader.configuration
        self.transport = downloader.transport
        self.fileSystem = downloader.fileSystem
        self.clock = clock
        self.logger = downloader.logger
        self.random = downloader.random
        self.progressHandler = progress
        self.onDiskHandler = onDisk
        self.flow = Mutex(
            DownloadFlow(url: request.url, expectedSize: request.expectedSize, configuration: downloader.configuration))
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
            if record == nil, flow.withLock({ $0.bytesReceived == 0 }) { Downloader.discardPartial(of: request) }
            throw error
        }
    }

    private func execute(record: ResumeRecord?, file: any PartialFile) async throws -> DownloadResult {
        if record == nil {
            unlink(request.resumeRecordPath)
            try file.allocate(size: 0)
        }
        let first = flow.withLock { $0.probe(resuming: record) }
        let probe = try await withRetries(progressMade: { false }) {
            self.emit(waiting: .server(TransportFailure.serverName(self.flow.withLock { $0.resolvedURL })))
            // Under the watchdog: a server that accepts the connection and never answers is given up on after
            // the stall timeout, not after the transport's minute-long read timeout.
            let answer = try await self.withStallWatchdog { _ in
                try await self.send(range: first.range, ifRange: first.ifRange)
            }
            guard DownloadFlow.isProbeAnswer(answer.status) else { throw self.statusError(answer) }
            return answer
        }
        emit(waiting: nil)
        logger.trace("probe answered", metadata: ["status": "\(probe.status)", "range": "\(first.range)"])
        switch probe.status {
        case 206:
            try await startParallel(probe: probe, requested: first.range, record: record, file: file)
        case 200:
            try flow.withLock { try $0.probeAnsweredWhole(resuming: record) }
            try await runSingleStream(first: probe, file: file)
        default:
            try flow.withLock { try $0.probeAnsweredUnsatisfiable(DownloadFlow.Answer(probe), resuming: record) }
        }
        // A git blob id is a second pass over the file, and fsync waits on the disk: off the cooperative pool.
        return try await BlockingWork.run { try self.finish(file: file) }
    }

    /// The resume sidecar, when it describes the partial file beside it and this same request.
    private func usableResumeRecord() -> ResumeRecord? {
        guard let record = ResumeRecord.load(from: request.resumeRecordPath),
            record.url == request.resumeIdentity,
            record.expectedSHA256 == request.expectedSHA256,
            let attributes = try? FileManager.default.attributesOfItem(atPath: request.partialPath),
            (attributes[.size] as? NSNumber)?.int64Value == record.totalSize
        else { return nil }
        return record
    }

    /// Fails with `insufficientDiskSpace` unless the destination volume can take `needed` more bytes.
    func checkDiskSpace(needed: Int64) throws {
        guard needed > 0 else { return }
        let folder = request.destination.deletingLastPathComponent().path
        let available = try fileSystem.availableSpace(forPath: folder)
        guard available >= needed else {
            throw ModelDepotError(
                .insufficientDiskSpace,
                "Not enough disk space in \(folder): the download needs \(needed) more bytes but only \(available) are free. Free \(needed - available) bytes or choose another destination.",
                remedy: .freeSpace)
        }
    }

    /// Verifies what was downloaded and moves it into place.
    private func finish(file: any PartialFile) throws -> DownloadResult {
        emit(phase: .verifying)
        let (total, digest, received, resumed) = flow.withLock {
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
