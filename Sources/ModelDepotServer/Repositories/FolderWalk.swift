import ModelDepotCore
import ModelDepotPlatform
import Synchronization

/// One walk of a repository folder and what it must still find on disk for its answer to stand, so a request can
/// reuse it after a few `stat` calls instead of walking, hashing and sorting again.
///
/// The validators: every folder the walk read (adding, removing or renaming an entry changes a folder's
/// modification time), every file it listed (size, times, inode), and every link it followed (its real path now,
/// which also moves when a link further up the way is re-pointed). A walk is reused only when it is *settled*:
/// nothing it read changed within ``settleTime`` before it began. A file system stamps times from a coarse clock
/// (a scheduler tick, or whole seconds on some), so two changes close together can leave the same times, and a
/// walk between them would look current after the second; a settled walk cannot have fallen between two such
/// changes, and an unsettled one is simply walked again next time.
///
/// Where the kernel says what changes (``ChangeWatch``), a settled walk reached without links is also watched:
/// while no notice came for its folders and files since the last check that found them as the walk did, it stands
/// without a single `stat`, for at most ``watchTrust`` after that check (``Watch``).
final class FolderWalk: Sendable {
    /// A folder the walk listed, by its real path.
    struct Folder: Sendable {
        let path: String
        let stamp: FileStamp
    }

    /// A link the walk met and the real path it led to: one it followed, or one it skipped (leading nowhere, or
    /// outside what the root serves), whose target may come to be served.
    struct Link: Sendable {
        let path: String
        let target: String?
    }

    /// How long before a walk began everything it read must have been left alone for the walk to be reused.
    static let settleTime: Int64 = 2_000_000_000
    /// Above this many `stat` calls a check goes to a blocking-work thread; below it, it costs less than the hop.
    static let inlineCheckLimit = 64

    let snapshot: RepoSnapshot
    /// The repository folder's real path.
    let folder: String
    /// Whether ``folder`` is `root/namespace/name` itself: the repository was reached without a link.
    let reachedDirectly: Bool
    let folders: [Folder]
    let links: [Link]
    let settled: Bool
    /// The kernel's notices for what the walk read, when it is watched.
    let watch: Watch?

    /// - Parameter started: wall-clock nanoseconds since 1970 taken before the walk read anything.
    init(
        snapshot: RepoSnapshot, folder: String, reachedDirectly: Bool, folders: [Folder], links: [Link],
        started: Int64
    ) {
        self.snapshot = snapshot
        self.folder = folder
        self.reachedDirectly = reachedDirectly
        self.folders = folders
        self.links = links
        watch = nil
        let latest = max(
            folders.map(\.stamp.latestChange).max() ?? .min,
            snapshot.files.compactMap(\.stamp?.latestChange).max() ?? .min)
        settled = latest < started - Self.settleTime
    }

    /// The same walk under a new watch, or none.
    init(_ walk: FolderWalk, watch: Watch?) {
        snapshot = walk.snapshot
        folder = walk.folder
        reachedDirectly = walk.reachedDirectly
        folders = walk.folders
        links = walk.links
        settled = walk.settled
        self.watch = watch
    }

    /// Whether the disk still holds exactly what the walk found; off the cooperative pool for a big repository.
    func isCurrent() async -> Bool {
        guard folders.count + links.count + snapshot.files.count > Self.inlineCheckLimit else { return check() }
        return (try? await BlockingWork.run { self.check() }) ?? false
    }

    /// Every path whose change changes the walk's answer: what a watch covers (the walk must have no links).
    var watchedPaths: [String] { folders.map(\.path) + snapshot.files.map(\.diskPath) }

    func check() -> Bool {
        for folder in folders {
            guard let status = FileStatus(path: folder.path), status.kind == .folder, FileStamp(status) == folder.stamp
            else { return false }
        }
        for link in links where ServedFolder.realPath(of: link.path) != link.target { return false }
        for file in snapshot.files {
            guard let stamp = file.stamp, let status = FileStatus(path: file.diskPath, followingLinks: false),
                status.kind == .file, FileStamp(status) == stamp
            else { return false }
        }
        return true
    }
}

extension FolderWalk {
    /// How long a passing check is trusted while no notice comes: the kernel sends none for stores into a shared
    /// mapping of a file (``ChangeWatch``), which change the file's times as they happen; a walk is checked by
    /// `stat` at least this often, so such a change shows within it.
    static let watchTrust: Duration = .seconds(1)

    /// What vouches for a walk between `stat` checks: the watch of its paths (and of the folders on the way to it,
    /// so that an organization or repository folder swapped for a link is noticed too), and the moment and time
    /// the last check that found the disk as the walk did began. Before any such check it vouches for nothing.
    final class Watch: Sendable {
        let changes: ChangeWatch
        let watched: ChangeWatch.Watched
        private let lastCheck = Mutex<(moment: UInt64, time: ContinuousClock.Instant?)>((0, nil))

        init(changes: ChangeWatch, watched: ChangeWatch.Watched) {
            self.changes = changes
            self.watched = watched
        }

        /// Whether nothing watched has changed since the last check passed, less than ``watchTrust`` before `now`:
        /// a `poll` of the mount table and a `read` of the kernel's queue.
        func isUnchanged(now: ContinuousClock.Instant) -> Bool {
            let last = lastCheck.withLock { $0 }
            guard let time = last.time, now < time + FolderWalk.watchTrust else { return false }
            return changes.isUnchanged(watched, since: last.moment)
        }

        /// Take before a check, with the time; hand both to ``checked(at:time:)`` when it passes. Nil when this
        /// watch can never vouch again (the kernel dropped one of its watches, or a new epoch started: a file
        /// deleted, a file system mounted or unmounted, notices lost): the walk must be watched anew.
        func moment() -> UInt64? { changes.moment(for: watched) }

        /// A check that began at `moment` and `time` found the disk as the walk did.
        func checked(at moment: UInt64, time: ContinuousClock.Instant) {
            lastCheck.withLock { last in
                if moment >= last.moment { last = (moment, time) }
            }
        }
    }
}
