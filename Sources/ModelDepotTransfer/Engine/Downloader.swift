import Foundation
import Logging
import ModelDepotCore

/// Downloads one URL to one file: parallel ranges, crash-safe resume, streaming SHA-256, retries.
///
/// ```swift
/// let downloader = Downloader()
/// let result = try await downloader.download(
///     DownloadRequest(url: modelURL, destination: fileURL, expectedSHA256: hash)
/// ) { progress in print(progress.fractionCompleted ?? 0) }
/// ```
///
/// Guarantees:
/// - A file at `destination` is always complete and verified: bytes collect in `<destination>.incomplete`
///   and are renamed into place only after the size and hash checks pass.
/// - Partial data survives crashes, `kill -9`, cancellation and errors; the next call fetches only what is
///   missing, and starts over if the file changed on the server (never mixing two versions).
/// - Credentials in ``DownloadRequest/headers`` are sent to the URL's origin only.
/// - Two processes downloading to the same destination take turns (a lock file beside it); the second finds
///   the finished file and returns at once.
/// - Memory stays constant whatever the file size; all waiting goes through the injected clock.
package struct Downloader: Sendable {
    /// The engine's settings.
    package let configuration: DownloadConfiguration
    let transport: any HTTPTransport
    package let fileSystem: any DownloadFileSystem
    let clock: any Clock<Duration>
    let logger: Logger
    let random: @Sendable () -> Double

    /// - Parameters:
    ///   - transport: the HTTP stack; ``DefaultTransport/shared`` by default.
    ///   - fileSystem: the disk seam; tests pass one that fills up.
    ///   - clock: every sleep (backoff, stall timeout, lock polling) and speed measurement uses it.
    ///   - configuration: connections, segment size, retries, timeouts.
    ///   - logger: where the engine logs attempts and retries; silent by default.
    ///   - random: jitter source in `0..<1`, injectable for deterministic tests.
    package init(
        transport: any HTTPTransport = DefaultTransport.shared,
        fileSystem: any DownloadFileSystem = LocalFileSystem(),
        clock: any Clock<Duration> = ContinuousClock(),
        configuration: DownloadConfiguration = DownloadConfiguration(),
        logger: Logger = Logger(label: "modeldepot.transfer", factory: { _ in SwiftLogNoOpLogHandler() }),
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) {
        self.transport = transport
        self.fileSystem = fileSystem
        self.clock = clock
        self.configuration = configuration
        self.logger = logger
        self.random = random
    }

    /// The same downloader (transport, disk, clock) with other settings.
    package func with(_ change: (inout DownloadConfiguration) -> Void) -> Downloader {
        var configuration = self.configuration
        change(&configuration)
        return Downloader(
            transport: transport, fileSystem: fileSystem, clock: clock, configuration: configuration, logger: logger,
            random: random)
    }

    /// Downloads `request.url` to `request.destination`, or returns at once if it is already there.
    ///
    /// - Parameters:
    ///   - request: what to download, where to, and the SHA-256 it must have.
    ///   - progress: called from the download's tasks, in order, at most every
    ///     ``DownloadConfiguration/progressInterval`` while bytes flow and on every phase change. Keep it quick.
    /// - Returns: the verified file and what it took.
    /// - Throws: `ModelDepotError`; on cancellation its code is `cancelled` and partial data is kept.
    package func download(
        _ request: DownloadRequest,
        progress: @escaping @Sendable (DownloadProgress) -> Void = { _ in }
    ) async throws -> DownloadResult {
        try await download(request, progress: progress, onDisk: nil)
    }

    /// ``download(_:progress:)``, telling `onDisk` which byte ranges of `request.partialPath` are written after
    /// every write (from the download's tasks, in order): what a reader may already serve of a file still
    /// arriving. The set can shrink when a stream without ranges starts over.
    package func download(
        _ request: DownloadRequest,
        progress: @escaping @Sendable (DownloadProgress) -> Void = { _ in },
        onDisk: (@Sendable (ByteRangeSet) -> Void)?
    ) async throws -> DownloadResult {
        // `url` is a var: credentials put back into it after init still never travel or get stored in the URL.
        let request = request.movingURLCredentialsToHeader()
        try Self.validate(request)
        // Hashing a file already there (gigabytes) runs off the cooperative pool.
        if !request.replacesExisting, let present = try await BlockingWork.run({ try Self.existingFile(for: request) })
        {
            progress(.alreadyThere(size: present.size))
            return present
        }
        try Self.createParentFolder(of: request.destination)
        let engineClock = EngineClock(clock)
        let lock: FileLock
        do {
            lock = try await FileLock.acquire(path: request.lockPath, clock: engineClock)
        } catch is CancellationError {
            throw ModelDepotError.cancelled()
        }
        defer { lock.release(keepingFile: request.lockIsShared) }
        // Another process may have finished the same file while this one waited for the lock.
        if !request.replacesExisting, let present = try await BlockingWork.run({ try Self.existingFile(for: request) })
        {
            progress(.alreadyThere(size: present.size))
            return present
        }
        // A Wi-Fi-only download on cellular waits, and says so, rather than failing.
        try await configuration.networkPolicy.waitUntilAllowed(by: configuration.networkConditions) { wait in
            progress(DownloadProgress(phase: .resolving, waiting: wait))
        }
        var restarts = 0
        while true {
            let run = DownloadRun(
                request: request, downloader: self, clock: engineClock, progress: progress, onDisk: onDisk)
            do {
                // A path that turns expensive or constrained mid-file (Wi-Fi lost, Low Data Mode on) stops the
                // file where it is; it goes on, from its resume record, when the network allows again.
                return try await configuration.networkPolicy.whileAllowed(by: configuration.networkConditions) {
                    try await run.execute()
                }
            } catch let interruption as NetworkPolicy.Interrupted {
                logger.notice(
                    "download paused by the network policy",
                    metadata: ["url": "\(URLRedaction.redacted(request.url))", "reason": "\(interruption.reason)"])
                // The bytes already here stay counted while it waits (an overall figure must not drop).
                let kept = resumableBytes(for: request)
                try await configuration.networkPolicy.waitUntilAllowed(by: configuration.networkConditions) { wait in
                    var waiting = DownloadProgress(phase: .resolving, bytesCompleted: kept, waiting: wait)
                    // On disk already: what comes over the network is counted again from the next run.
                    waiting.bytesResumed = kept
                    progress(waiting)
                }
                // The file may have been finished just as the path changed.
                if let present = try await BlockingWork.run({ try Self.existingFile(for: request) }) {
                    progress(.alreadyThere(size: present.size))
                    return present
                }
            } catch let error as ModelDepotError where error.code == .sourceChanged {
                Self.discardPartial(of: request)
                guard restarts < configuration.maxSourceChanges else { throw error }
                restarts += 1
                logger.notice(
                    "restarting download from zero",
                    metadata: [
                        "url": "\(URLRedaction.redacted(request.url))",
                        "reason": "\(URLRedaction.redacted(in: error.message))",
                    ])
            }
        }
    }

    /// Whether `request.destination` already holds the file: its SHA-256 matches, or (no hash given) its size.
    package func isDownloaded(_ request: DownloadRequest) throws -> Bool {
        try Self.existingFile(for: request) != nil
    }

    /// Bytes of `request` already on disk from an earlier, unfinished run (what a resume will not fetch again).
    package func resumableBytes(for request: DownloadRequest) -> Int64 {
        guard let record = ResumeRecord.load(from: request.resumeRecordPath), record.url == request.resumeIdentity
        else {
            return 0
        }
        return record.completed.count
    }

    /// Removes the file, its partial data and its resume sidecar.
    package func delete(_ request: DownloadRequest) throws {
        Self.discardPartial(of: request)
        if FileManager.default.fileExists(atPath: request.destination.path) {
            do {
                try FileManager.default.removeItem(at: request.destination)
            } catch {
                throw ModelDepotError(
                    .fileSystem, "Cannot delete \(request.destination.path): \(error.localizedDescription)",
                    underlying: error)
            }
        }
    }

    package static func discardPartial(of request: DownloadRequest) {
        unlink(request.partialPath)
        unlink(request.resumeRecordPath)
    }

    static func validate(_ request: DownloadRequest) throws {
        let scheme = request.url.scheme?.lowercased()
        guard scheme == "http" || scheme == "https", let host = request.url.host, !host.isEmpty else {
            throw ModelDepotError(
                .invalidURL,
                "Cannot download '\(URLRedaction.redacted(request.url))': give a full http:// or https:// URL with a host name."
            )
        }
        if let hash = request.expectedSHA256 {
            guard hash.count == 64, hash.allSatisfy(\.isHexDigit) else {
                throw ModelDepotError(
                    .invalidArgument, "'\(hash)' is not a SHA-256: expected 64 hexadecimal characters.")
            }
        }
        if let blobID = request.expectedGitBlobID, !HubEncoding.isGitID(blobID) {
            throw ModelDepotError(
                .invalidArgument, "'\(blobID)' is not a git blob id: expected 40 hexadecimal characters.")
        }
        if let size = request.expectedSize, size < 0 {
            throw ModelDepotError(.invalidArgument, "The expected size \(size) is negative.")
        }
    }

    static func existingFile(for request: DownloadRequest) throws -> DownloadResult? {
        let path = request.destination.path
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else { return nil }
        if isFolder.boolValue {
            throw ModelDepotError(.fileSystem, "\(path) is a folder; choose a file path as the destination.")
        }
        guard let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value
        else { return nil }
        if let expectedSize = request.expectedSize, expectedSize != size { return nil }
        var sha256: String?
        if let expected = request.expectedSHA256 {
            let actual = try PrefixHasher.hashFile(atPath: path)
            guard actual == expected else { return nil }
            sha256 = actual
        } else if let expected = request.expectedGitBlobID {
            guard try FileDigests.gitBlobID(ofFileAt: path) == expected else { return nil }
        } else if request.expectedSize == nil {
            return nil
        }
        return DownloadResult(
            file: request.destination, size: size, sha256: sha256, bytesReceived: 0, bytesResumed: 0,
            wasAlreadyPresent: true)
    }

    static func createParentFolder(of destination: URL) throws {
        let folder = destination.deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw ModelDepotError(
                .fileSystem,
                "Cannot create the folder \(folder.path): \(error.localizedDescription). Choose a destination you can write to.",
                underlying: error)
        }
        guard access(folder.path, W_OK) == 0 else {
            throw ModelDepotError(
                .fileSystem, "Cannot write to \(folder.path): permission denied. Choose a destination you can write to."
            )
        }
    }
}
