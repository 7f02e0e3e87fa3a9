import ModelDepotCore

/// Each request's latest download task, in the order they started: the one registry of a manager's downloads.
/// `ModelDownloads` (the screens), the web app and apps all read this one; nothing else keeps tasks.
///
/// A download under a policy is kept apart from a plain one of the same request: a plain request never joins it
/// (it may end refused), and starting one never hides the other from `cancelDownload` or a delete.
struct DownloadRegistry {
    /// What a download is held to besides its request.
    enum Kind: Hashable {
        case plain
        /// Refused if the files it selects hold a pickle.
        case refusingPickles
        /// Checked against a publisher's signature (and maybe refusing pickles).
        case signed
    }

    private struct Key: Hashable {
        var request: SnapshotRequest
        var kind: Kind
    }
    private var byKey: [Key: ModelDownloadTask] = [:]
    private var order: [Key] = []

    /// Every task, oldest first.
    var tasks: [ModelDownloadTask] { order.compactMap { byKey[$0] } }

    /// The latest plain download of `request`, else the latest one under a policy.
    func task(for request: SnapshotRequest) -> ModelDownloadTask? {
        byKey[Key(request: request, kind: .plain)] ?? byKey[Key(request: request, kind: .refusingPickles)]
            ?? byKey[Key(request: request, kind: .signed)]
    }

    /// The latest download of `request` of `kind`: the one a request of the same kind may join.
    func task(for request: SnapshotRequest, kind: Kind) -> ModelDownloadTask? {
        byKey[Key(request: request, kind: kind)]
    }

    /// The latest download of `request` a plain request may join.
    func plainTask(for request: SnapshotRequest) -> ModelDownloadTask? { task(for: request, kind: .plain) }

    /// Records `task` as its request's latest of its kind (a retried download replaces the failed one).
    mutating func add(_ task: ModelDownloadTask, kind: Kind = .plain) {
        let key = Key(request: task.request, kind: kind)
        if byKey.updateValue(task, forKey: key) != nil { order.removeAll { $0 == key } }
        order.append(key)
    }

    /// Forgets `task` (a delete stopped it); a newer task of the same request stays.
    mutating func remove(_ task: ModelDownloadTask) {
        for key in order where byKey[key] === task { byKey[key] = nil }
        order.removeAll { byKey[$0] == nil }
    }
}

/// Where several downloads stand together: one value for an overall bar, computed once here rather than by
/// every screen.
public struct OverallProgress: Sendable, Equatable {
    /// Downloads running, waiting to run or paused.
    public var downloads: Int
    /// Bytes in place across them (what earlier runs left included).
    public var bytesCompleted: Int64
    /// Bytes in all across the downloads whose size is known yet.
    public var totalBytes: Int64
    /// Bytes per second across the running ones.
    public var bytesPerSecond: Double

    public init(downloads: Int = 0, bytesCompleted: Int64 = 0, totalBytes: Int64 = 0, bytesPerSecond: Double = 0) {
        self.downloads = downloads
        self.bytesCompleted = bytesCompleted
        self.totalBytes = totalBytes
        self.bytesPerSecond = bytesPerSecond
    }

    /// `bytesCompleted / totalBytes`, at most 1; nil while no size is known.
    public var fractionCompleted: Double? {
        totalBytes > 0 ? min(1, Double(bytesCompleted) / Double(totalBytes)) : nil
    }

    /// Adds up the progress of the tasks that have not ended.
    public init(of tasks: [ModelDownloadTask]) {
        self.init()
        for task in tasks where !task.state.isFinal {
            downloads += 1
            guard let progress = task.latestProgress else { continue }
            bytesCompleted += progress.bytesCompleted
            totalBytes += progress.totalBytes ?? 0
            if case .downloading = task.state { bytesPerSecond += progress.bytesPerSecond }
        }
    }
}

extension ModelManager {
    /// Every download this manager started (each request's latest task, running or ended), oldest first.
    public var downloads: [ModelDownloadTask] { registry.tasks }

    /// The latest download of `request`, running or ended; nil when none was started.
    public func task(for request: SnapshotRequest) -> ModelDownloadTask? { registry.task(for: request) }

    /// The latest download of a catalog entry's variant, running or ended.
    public func task(for entry: CatalogEntry) -> ModelDownloadTask? { registry.task(for: entry.snapshotRequest) }

    /// Cancels every running, waiting or paused download of `repo` (whatever files or revision each asked for),
    /// from anywhere in the app: what arrived stays for a later download. Returns how many were cancelled.
    @discardableResult
    public func cancelDownload(_ repo: RepoID, type: RepoType = .model) async -> Int {
        let running = registry.tasks.filter { $0.request.repo == repo && $0.request.type == type && !$0.state.isFinal }
        for task in running { await task.cancel() }
        return running.count
    }

    /// Cancels the download of a catalog entry's variant, when one runs; returns whether one did.
    @discardableResult
    public func cancelDownload(_ entry: CatalogEntry) async -> Bool {
        let running = registry.tasks.filter { $0.request == entry.snapshotRequest && !$0.state.isFinal }
        for task in running { await task.cancel() }
        return !running.isEmpty
    }

    /// The downloads still running, waiting or paused, as one value (an overall bar, a badge).
    public var overallProgress: OverallProgress { OverallProgress(of: registry.tasks) }
}
