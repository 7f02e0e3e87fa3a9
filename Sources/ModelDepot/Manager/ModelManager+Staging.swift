import ModelDepotCore

extension ModelManager {
    /// Downloads and verifies what is missing of `request` into the cache's `blobs/` but links nothing: the cache
    /// looks as it did until ``publish(_:)``. For checks of your own before a model becomes loadable (a review, a
    /// scan): a staged pull that is never published leaves nothing anyone would load.
    ///
    /// A download with a signature requirement or a lock (`DownloadPolicy`) stages and publishes this way by
    /// itself. Offline, or when the Hub cannot be reached, the cached snapshot is the answer (already published).
    ///
    /// - Throws: `invalidArgument` for a request with a local directory; otherwise what a download throws.
    public nonisolated func stage(
        _ request: SnapshotRequest, progress: @escaping @Sendable (SnapshotProgress) -> Void = { _ in }
    ) async throws -> StagedSnapshot {
        try await pull.stage(request, progress: progress)
    }

    /// Makes a staged pull the snapshot of its revision: links its files into `snapshots/<commit>/`, then points
    /// the revision's ref at the commit (last, so an interrupted publish leaves the old revision current).
    public nonisolated func publish(_ staged: StagedSnapshot) async throws -> Snapshot {
        try await pull.publish(staged)
    }
}
