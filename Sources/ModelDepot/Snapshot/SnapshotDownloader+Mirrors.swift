import Foundation
import ModelDepotCore
import ModelDepotHub
import ModelDepotTransfer
import ModelDepotTrust

extension SnapshotDownloader {
    /// How the engine tries a mirror before handing over to the next place: two attempts within ten seconds.
    static let mirrorRetryPolicy = RetryPolicy(maxAttempts: 2, maxDelay: .seconds(2), budget: .seconds(10))

    /// Downloads one file of `request` at `commit` from the first place that serves it: each of the Hub client's
    /// mirrors in order, then the endpoint (the only place when there are no mirrors). A content-only mirror is
    /// asked only for a blob whose name the download verifies.
    ///
    /// A mirror that fails in any way but cancellation or a full disk hands over to the next place; the
    /// endpoint's error is final. With mirrors the sidecar is keyed by the blob's name, not the URL, so the bytes
    /// one place sent are resumed from the next (its validators and the final hash still guard the content).
    ///
    /// - Parameter download: the request for the file at a place's URL, with that place's headers.
    func downloadFromFirstThatAnswers(
        _ path: RepoFilePath, of request: SnapshotRequest, commit: String, etag: String, size: Int64,
        engine: Downloader, tracker: SnapshotProgressTracker, onDisk: (@Sendable (ByteRangeSet) -> Void)? = nil,
        download: (URL, [(name: String, value: String)]) -> DownloadRequest
    ) async throws -> DownloadResult {
        // A content-only mirror (found on the network) serves only what the download can check: a blob named by
        // its SHA-256 or git blob id, from a listing it did not give.
        let checkable = HubEncoding.isSHA256(etag) || HubEncoding.isGitID(etag)
        var places = zip(hub.mirrors.map(\.trust) + [.named], hub.endpointsInOrder)
            .filter { trust, place in
                // One that failed once in this client's life is not asked again: anyone on the link can announce a
                // mirror that is slow, silent or wrong, and it costs no more than one file.
                trust == .named || (checkable && !hub.discoveredFailures.contains(place.endpoint))
            }
        // Bytes a named place already sent for this blob are resumed by it, never truncated by a content-only
        // attempt (which keeps its bytes under a key of its own, in the same partial file).
        if places.contains(where: { $0.0 == .contentOnly }), let named = places.first(where: { $0.0 == .named })?.1 {
            let url = named.resolveURL(request.repo, type: request.type, revision: commit, path: path)
            var resumed = download(url, named.authorization(for: url))
            resumed.resumeKey = "blob:\(etag)"
            if engine.resumableBytes(for: resumed) > 0 { places.removeAll { $0.0 == .contentOnly } }
        }
        for (index, (trust, place)) in places.enumerated() {
            let url = place.resolveURL(request.repo, type: request.type, revision: commit, path: path)
            var attempt = download(url, place.authorization(for: url))
            let isLast = index == places.count - 1
            if places.count > 1 {
                // Bytes are resumed across the places the user named. A content-only mirror's are its own: a hostile
                // one's partial (wrong bytes, no validators, cut short) is never resumed elsewhere, nor another's by it.
                attempt.resumeKey = trust == .named ? "blob:\(etag)" : "blob:\(etag)@\(place.endpoint.absoluteString)"
                tracker.using(endpoint: TransportFailure.serverName(place.endpoint))
            }
            // A mirror gets a short policy, then the next place takes over; the endpoint gets the full one.
            let tries =
                isLast
                ? engine
                : engine.with {
                    $0.retryPolicy = Self.mirrorRetryPolicy
                    // A content-only mirror serves what it is asked, itself: its redirect could point this machine
                    // at anything (a service on loopback, a cloud's metadata address), so it ends its turn instead.
                    if trust == .contentOnly { $0.maxRedirects = 0 }
                }
            do {
                return try await tries.download(
                    attempt,
                    progress: { progress in
                        tracker.fileProgress(
                            path.value, done: progress.bytesCompleted, size: size, resumed: progress.bytesResumed,
                            connections: progress.activeConnections, waiting: progress.waiting)
                    }, onDisk: onDisk)
            } catch let error as ModelDepotError
                where !isLast && error.code != .cancelled && error.code != .insufficientDiskSpace
            {
                if trust == .contentOnly { hub.discoveredFailures.insert(place.endpoint) }
                logger.notice(
                    "a mirror failed; the next one takes over",
                    metadata: [
                        "mirror": "\(URLRedaction.redacted(place.endpoint))", "file": "\(path)",
                        "error": "\(URLRedaction.redacted(in: error.message))",
                    ])
            }
        }
        throw ModelDepotError.cancelled()  // unreachable: the last place's error is thrown above
    }
}
