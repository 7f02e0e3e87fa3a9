import Logging
import ServiceLifecycle

/// Keeps the Xet index of every served file current (`serve --xet`), so a client never finds a file it may fetch
/// by Xet answered by plain HTTP because nobody had asked for it yet.
///
/// At start and every ``interval`` it walks what the mirror holds (``RepositorySource/recordedSnapshot(type:id:)``,
/// never asking an upstream; a folder's walk is remembered while nothing in it changed) and asks the store for each
/// file's index: a file not indexed yet, or changed since it was (a new commit of a pull-through, an edited file
/// in a folder), is built then, at background priority. One file at a time, in listing order: a file indexed after
/// another of its repository cites the chunks they share (the next revision of a weights file fetches only what
/// changed), which two builds side by side would not see. A client asking while a build runs still gets plain
/// HTTP, and may start a build of its own in the store's other slot.
struct XetIndexer: Service {
    let store: XetStore
    let source: any RepositorySource
    let metrics: MirrorMetrics
    let interval: Duration
    let logger: Logger

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                await round()
                try? await Task.sleep(for: interval)
            }
        }
    }

    /// How often a wait for a build slot or for a build's end looks again.
    static let buildPoll: Duration = .milliseconds(50)

    /// Asks for `file`'s index and, when that starts a build (or one runs), waits for it to end; true when the
    /// file's index is current.
    func index(_ file: ServedFile, repository: String) async -> Bool {
        if await store.index(for: file, repository: repository) != nil { return true }
        while !Task.isCancelled, await !store.isBuilding(file.etag), await !store.hasFreeBuildSlot {
            try? await Task.sleep(for: Self.buildPoll)
        }
        if await store.index(for: file, repository: repository) != nil { return true }
        while !Task.isCancelled, await store.isBuilding(file.etag) {
            try? await Task.sleep(for: Self.buildPoll)
        }
        return await store.index(for: file, repository: repository) != nil
    }

    /// One walk: starts what builds it can and records how many files are indexed and how many wait.
    func round() async {
        guard let repositories = try? source.repositories() else { return }
        var indexed = 0
        var pending = 0
        for (type, id) in repositories {
            guard !Task.isCancelled else { return }
            guard let snapshot = try? await source.recordedSnapshot(type: type, id: id) else { continue }
            let repository = "\(type.apiSegment)/\(id)"
            for file in snapshot.files where file.size > 0 {
                if await index(file, repository: repository) {
                    indexed += 1
                } else {
                    pending += 1
                }
            }
        }
        metrics.recordXetFiles(indexed: indexed, pending: pending)
        if pending > 0 { logger.debug("xet indexes", metadata: ["indexed": "\(indexed)", "pending": "\(pending)"]) }
    }
}
