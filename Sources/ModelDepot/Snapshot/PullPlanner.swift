import ModelDepotCache
import ModelDepotCore

/// The pure half of a pull: from a request, the commit's file list and what the destination already holds, which
/// files the request selects, which must be fetched and in what order, how many bytes that is and how much disk it
/// needs. No I/O, so every rule is tested without sockets or files (as `DownloadFlow` is for one file); the
/// executor (`SnapshotDownloader`) asks the destination what it holds, then runs this plan.
enum PullPlanner {
    /// The files of `tree` that `request` selects: its patterns, narrowed to the files or folders it names.
    ///
    /// - Throws: `invalidArgument` (remedy `changePatterns`) when include patterns select nothing in a repository
    ///   that has files; `entryNotFound` naming each file or folder the tree lacks.
    static func select(_ request: SnapshotRequest, from tree: RecordedTree) throws -> [RepoFilePath] {
        var selected = tree.files.keys.filter { request.selection.selects($0.value) }.sorted()
        if let names = request.files {
            let named = try filesNamed(names, in: tree, request)
            selected = selected.filter { named.contains($0) }
        }
        if selected.isEmpty, !request.selection.include.isEmpty, !tree.files.isEmpty {
            throw ModelDepotError(
                .invalidArgument,
                "No file of \(request.repo) matches the include patterns \(request.selection.include.map(\.pattern).joined(separator: " ")). Its files include: \(someFiles(of: tree)).",
                remedy: .changePatterns)
        }
        return selected
    }

    /// The files `names` select: each a file of the tree, or a folder whose files all count.
    static func filesNamed(_ names: [String], in tree: RecordedTree, _ request: SnapshotRequest) throws
        -> Set<RepoFilePath>
    {
        var selected: Set<RepoFilePath> = []
        var absent: [String] = []
        for name in names {
            let trimmed = name.hasSuffix("/") ? String(name.dropLast()) : name
            if let path = try? RepoFilePath(trimmed), tree.files[path] != nil {
                selected.insert(path)
                continue
            }
            let under = tree.files.keys.filter { $0.value.hasPrefix(trimmed + "/") }
            if under.isEmpty { absent.append(name) } else { selected.formUnion(under) }
        }
        guard absent.isEmpty else {
            throw ModelDepotError(
                .entryNotFound,
                "\(request.repo) has no file or folder \(absent.map { "'\($0)'" }.joined(separator: ", ")) at '\(request.revision)'. Its files include: \(someFiles(of: tree))."
            )
        }
        return selected
    }

    /// What fetching `selected` takes, given the files the destination holds up to date (`present`) and those
    /// with bytes of an interrupted download (`resumable`): a forced request fetches every selected file anew.
    static func work(
        for request: SnapshotRequest, tree: RecordedTree, selected: [RepoFilePath], present: Set<RepoFilePath>,
        resumable: Set<RepoFilePath> = []
    ) -> PullWork {
        let sizes = Dictionary(uniqueKeysWithValues: selected.map { ($0, tree.files[$0]?.size ?? 0) })
        let fetch = selected.filter { request.forceDownload || !present.contains($0) }
        // Largest first: the long transfers start early, and once the last large one has started the small files
        // fill the connections left. Ties by path, so a plan is the same every time.
        let ordered = fetch.sorted { (sizes[$0]!, $1.value) > (sizes[$1]!, $0.value) }
        return PullWork(
            selected: selected, toFetch: ordered, sizes: sizes,
            diskNeeded: ordered.filter { !resumable.contains($0) }.reduce(0) { $0 + sizes[$1]! })
    }

    private static func someFiles(of tree: RecordedTree) -> String {
        tree.files.keys.sorted().prefix(8).map(\.value).joined(separator: ", ")
    }
}

/// A pull's work, as ``PullPlanner`` decided it.
struct PullWork: Equatable, Sendable {
    /// Every file the request selects, by path.
    var selected: [RepoFilePath]
    /// The files to fetch, largest first.
    var toFetch: [RepoFilePath]
    /// Each selected file's size, from the listing.
    var sizes: [RepoFilePath: Int64]
    /// Bytes the destination must find room for: files to fetch that no interrupted download left bytes of.
    var diskNeeded: Int64

    func size(_ path: RepoFilePath) -> Int64 { sizes[path] ?? 0 }
    var totalBytes: Int64 { selected.reduce(0) { $0 + size($1) } }
    var fetchBytes: Int64 { toFetch.reduce(0) { $0 + size($1) } }
    /// What the destination already holds of the selection (a forced pull counts nothing as held).
    var heldFiles: Int { selected.count - toFetch.count }
    var heldBytes: Int64 { totalBytes - fetchBytes }

    /// The dry run's report of this work (`pull --dry-run`): each file, held or not, and the free space after.
    func report(repo: RepoID, commit: String, present: Set<RepoFilePath>, freeBytes: Int64?) -> SnapshotPlan {
        let fetching = Set(toFetch)
        return SnapshotPlan(
            repo: repo.description, commit: commit,
            files: selected.map {
                SnapshotPlan.File(
                    path: $0.value, size: size($0), cached: present.contains($0), willDownload: fetching.contains($0))
            }, freeBytes: freeBytes)
    }
}

/// Which file of a pull starts next: the queue runs largest first, at most `largeAtOnce` large files and
/// `filesAtOnce` files in all at a time. A value, stepped by the executor as transfers start and finish.
struct TransferQueue: Sendable {
    private var pending: ArraySlice<(path: RepoFilePath, large: Bool)>
    private let largeAtOnce: Int
    private let filesAtOnce: Int
    private(set) var running = 0
    private(set) var runningLarge = 0

    /// `files` largest first; a file of `smallFileSize` bytes or more counts as large.
    init(
        _ files: [RepoFilePath], sizes: (RepoFilePath) -> Int64, smallFileSize: Int64, largeAtOnce: Int,
        filesAtOnce: Int
    ) {
        pending = files.map { ($0, sizes($0) >= smallFileSize) }[...]
        self.largeAtOnce = max(1, largeAtOnce)
        self.filesAtOnce = max(1, filesAtOnce)
    }

    var isEmpty: Bool { pending.isEmpty }

    /// The next file to start now, or nil while the limits are reached (or nothing is left).
    mutating func next() -> (path: RepoFilePath, large: Bool)? {
        // The queue runs largest first, so once its head is small every file left is.
        guard let head = pending.first, running < filesAtOnce, !head.large || runningLarge < largeAtOnce else {
            return nil
        }
        pending.removeFirst()
        running += 1
        if head.large { runningLarge += 1 }
        return head
    }

    /// A transfer ended (done or failed).
    mutating func finished(large: Bool) {
        running -= 1
        if large { runningLarge -= 1 }
    }
}
