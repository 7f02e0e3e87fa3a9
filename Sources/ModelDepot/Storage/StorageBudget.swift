import Foundation
import ModelDepotCache
import ModelDepotTransfer

/// Keeps a cache under a size: evicts whole repositories, least recently used first, never pinned ones. Apps use it
/// through the manager, which answers with its ``Plan``:
///
/// ```swift
/// let preview = try await models.prune(maxSize: 20_000_000_000, dryRun: true)
/// let done = try await models.prune(maxSize: 20_000_000_000)
/// ```
public struct StorageBudget: Sendable {
    /// The cache whose size is kept in budget.
    package let cache: HubCache

    /// A budget over `cache`.
    package init(cache: HubCache) {
        self.cache = cache
    }

    /// What an eviction would remove.
    public struct Plan: Sendable {
        /// The repositories to delete, least recently used first.
        public var evicted: [CachedRepositoryReport]
        /// Bytes the cache takes now.
        public var sizeBefore: Int64
        /// Bytes the cache will take once the plan is executed.
        public var sizeAfter: Int64
        /// Still over the budget after evicting everything unpinned.
        public var stillOver: Bool

        /// Bytes the plan frees.
        public var freedBytes: Int64 { sizeBefore - sizeAfter }

        /// Deletes the planned repositories (blobs, snapshots and refs, as Python's delete strategy does).
        package func execute() throws {
            for repository in evicted { try DeletionPlan(deleting: nil, of: repository).execute() }
        }
    }

    /// Repositories that may be evicted, least recently used first.
    package func evictionCandidates() throws -> [CachedRepositoryReport] {
        try scan().map(candidates) ?? []
    }

    /// The evictions that bring the cache to `maxSize` bytes or below (one scan of the cache).
    ///
    /// - Parameters:
    ///   - maxSize: the most bytes the cache may take afterwards.
    ///   - sparing: repositories in use, by cache folder name (`models--org--name`): never evicted, as pinned
    ///     ones are not (a mirror spares those it is serving or pulling).
    package func plan(maxSize: Int64, sparing: Set<String> = []) throws -> Plan {
        guard let report = try scan() else { return Plan(evicted: [], sizeBefore: 0, sizeAfter: 0, stillOver: false) }
        var size = report.sizeOnDisk
        var evicted: [CachedRepositoryReport] = []
        for candidate in candidates(in: report) where size > maxSize {
            if sparing.contains(candidate.folder.lastPathComponent) { continue }
            evicted.append(candidate)
            size -= candidate.sizeOnDisk
        }
        return Plan(evicted: evicted, sizeBefore: report.sizeOnDisk, sizeAfter: size, stillOver: size > maxSize)
    }

    /// The cache's contents; nil when there is no cache yet.
    private func scan() throws -> CacheReport? {
        guard FileManager.default.fileExists(atPath: cache.root.path) else { return nil }
        return try CacheScanner(cache: cache).scan()
    }

    private func candidates(in report: CacheReport) -> [CachedRepositoryReport] {
        let pins = PinStore(cache: cache)
        return report.repositories.filter { repository in
            guard let id = repository.repoID, let type = repository.repoType else { return false }
            return !pins.isPinned(id, type: type)
        }.sorted { $0.lastAccessed < $1.lastAccessed }
    }

    /// Free bytes on the cache's volume (of its nearest existing ancestor), as `fileSystem` reports them: the
    /// same seam the transfer engine asks, so a test's full disk is full for both.
    package func availableSpace() -> Int64? { availableSpace(using: LocalFileSystem()) }

    /// Free bytes on the cache's volume as `fileSystem` reports them.
    package func availableSpace(using fileSystem: any DownloadFileSystem) -> Int64? {
        var folder = cache.root
        while !FileManager.default.fileExists(atPath: folder.path), folder.path != "/" {
            folder.deleteLastPathComponent()
        }
        return try? fileSystem.availableSpace(forPath: folder.path)
    }
}
