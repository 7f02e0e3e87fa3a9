import Foundation
import ModelDepotCache
import ModelDepotCore
import ModelDepotHub
import ModelDepotTransfer

extension SnapshotDownloader {
    /// Pulls `listed` into `blob` through Xet when the request allows it and the listing offers it (a SHA-256-named
    /// LFS file with a `xetHash`), under the blob's lock, as an HTTP pull would hold it. With mirrors, the CAS is the
    /// first place's that answers. Returns the bytes received, or nil when the file goes by HTTP: not offered, HTTP
    /// bytes of it already on disk, or — in `auto` — Xet failed (said once per pull; the HTTP pull that follows
    /// verifies from scratch).
    func pullThroughXet(
        _ listed: ListedFile, etag: String, size: Int64, blob: URL, lock: URL, tracker: SnapshotProgressTracker
    ) async throws -> Int64? {
        let request = listed.request
        let xetPartial = XetPull.partialPath(for: blob)
        guard request.xet != .never, let xetHash = listed.listing.xetHash, HubEncoding.isSHA256(etag), size > 0
        else {
            // What an earlier Xet pull of this blob left goes, under the lock, before HTTP fetches the file whole.
            if FileManager.default.fileExists(atPath: xetPartial) {
                let held = try await FileLock.acquire(path: lock.path, clock: EngineClock(clock))
                XetPull.discardPartial(at: xetPartial)
                held.release(keepingFile: true)
            }
            return nil
        }
        let held = try await FileLock.acquire(path: lock.path, clock: EngineClock(clock))
        defer { held.release(keepingFile: true) }
        // Another process may have finished it while this one waited for the lock.
        if !request.forceDownload, CacheScanner.regularFileSize(blob.path) == size {
            XetPull.discardPartial(at: xetPartial)
            return 0
        }
        // Bytes an HTTP pull left are resumed by HTTP: a Xet pull beside them would hold the file twice on disk.
        let repository = cache.repository(request.repo, type: request.type)
        if FileManager.default.fileExists(atPath: repository.partialBlob(etag).path) {
            XetPull.discardPartial(at: xetPartial)
            return nil
        }
        let path = listed.path.value
        try HubCache.createFolder(blob.deletingLastPathComponent())
        do {
            let access = try await tracker.xetAccess { [hub] in
                try await hub.xetAccess(request.repo, type: request.type, revision: listed.commit)
            }
            var pull = XetPull(
                hub: hub, access: access, fileHash: xetHash, size: size, expectedSHA256: etag, destination: blob,
                partialPath: xetPartial,
                connections: min(4, downloader.configuration.maxConnections),
                // What came from chunks on disk counts as resumed: done, but not received.
                progress: { done, fromDisk in tracker.fileProgress(path, done: done, size: size, resumed: fromDisk) })
            pull.refreshAccess = { [hub] in
                let fresh = try await hub.xetAccess(request.repo, type: request.type, revision: listed.commit)
                tracker.keepXetAccess(fresh)
                return fresh
            }
            pull.bandwidth = downloader.configuration.bandwidthLimit
            pull.syncBeforeRename = downloader.configuration.syncBeforeRename
            // A forced pull fetches everything again, as the HTTP path does.
            if !request.forceDownload {
                pull.local = { xorbs in XetRecord.localChunks(in: repository, xorbs: xorbs) }
            }
            let outcome: XetPull.Outcome
            do {
                outcome = try await pull.run()
            } catch let error as ModelDepotError where error.code == .checksumMismatch && pull.local != nil {
                // A record on disk that names the wrong chunks makes the file's hash come out wrong: once more,
                // fetching everything.
                logger.notice(
                    "a Xet pull using chunks on disk failed its hash; fetching them", metadata: ["file": "\(path)"])
                pull.local = nil
                tracker.fileAbandoned(path)  // what the first run received stays counted; the second counts its own
                outcome = try await pull.run()
            }
            // Kept for the next pull that shares these chunks; a record that cannot be written costs only that.
            try? await BlockingWork.run { try outcome.record.save(for: etag, in: repository) }
            tracker.xetFinished(network: outcome.bytesFromNetwork, disk: outcome.bytesFromDisk)
            return outcome.bytesFromNetwork
        } catch let error as ModelDepotError
            where request.xet == .auto && error.code != .cancelled && error.code != .insufficientDiskSpace
        {
            // HTTP fetches the whole file now: what Xet left of it would only take space. What Xet received stays
            // counted (HTTP's run of the file starts its own count).
            tracker.fileAbandoned(path)
            XetPull.discardPartial(at: xetPartial)
            if tracker.firstXetFailure() {
                logger.notice(
                    "Xet failed; files go by HTTP instead",
                    metadata: ["file": "\(path)", "error": "\(URLRedaction.redacted(in: error.message))"])
            }
            return nil
        }
    }
}
