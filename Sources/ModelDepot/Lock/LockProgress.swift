import ModelDepotCore

/// A lock's pull as it goes: its repositories one after another, each staged, checked against the lock and
/// published, and the one in flight.
public struct LockProgress: Sendable, Equatable {
    /// Repositories pulled and published so far.
    public var repositoriesCompleted: Int
    /// Repositories the lock names.
    public var totalRepositories: Int
    /// The repository being pulled now; nil before the first and once all are done.
    public var repository: RepoID?
    /// Its pull's progress (nil for an OCI artifact, and between repositories).
    public var current: SnapshotProgress?

    package init(
        repositoriesCompleted: Int, totalRepositories: Int, repository: RepoID? = nil, current: SnapshotProgress? = nil
    ) {
        self.repositoriesCompleted = repositoriesCompleted
        self.totalRepositories = totalRepositories
        self.repository = repository
        self.current = current
    }

    /// 0…1 over the repositories, the one in flight counted by its own fraction; nil while none is known.
    public var fractionCompleted: Double? {
        guard totalRepositories > 0 else { return nil }
        let inFlight = current?.fractionCompleted ?? 0
        return min(1, (Double(repositoriesCompleted) + inFlight) / Double(totalRepositories))
    }
}

extension LockProgress: TransferProgress {
    package func continuing(from earlier: LockProgress) -> LockProgress {
        var shown = self
        shown.totalRepositories = max(shown.totalRepositories, earlier.totalRepositories)
        if shown.repository == earlier.repository, let now = shown.current, let before = earlier.current {
            shown.current = now.continuing(from: before)
        }
        // A run that restarts a repository (a resume re-lists it) shows the earlier figures until it passes them.
        if shown.repositoriesCompleted < earlier.repositoriesCompleted
            || (shown.fractionCompleted ?? 0) < (earlier.fractionCompleted ?? 0)
        {
            return earlier
        }
        return shown
    }

    package static func completed(after last: LockProgress?, output: [Snapshot]) -> LockProgress {
        let total = max(last?.totalRepositories ?? 0, output.count)
        return LockProgress(repositoriesCompleted: total, totalRepositories: total)
    }
}

/// A lock pulled into the cache: every repository it names at its locked commit, checked against it before and
/// after; the snapshots, in the lock's order, when it completes.
public typealias LockDownloadTask = TransferTask<ModelLock, LockProgress, [Snapshot]>
