import Foundation
import ModelDepotCache
import ModelDepotCore
import ModelDepotTrust

/// Pinned repositories are never evicted by a storage budget. A pin is a marker file in the repository's
/// folder (`.modeldepot/pinned`, invisible to Python's cache tools), so it goes away with the repository.
package struct PinStore: Sendable {
    /// The cache whose repositories are pinned.
    package let cache: HubCache

    /// The pins of `cache`, kept inside each repository's folder.
    package init(cache: HubCache) {
        self.cache = cache
    }

    func marker(_ repository: CachedRepository) -> URL {
        repository.folder.appendingPathComponent(".modeldepot/pinned")
    }

    /// Whether the repository is pinned, so eviction leaves it alone.
    package func isPinned(_ repo: RepoID, type: RepoType = .model) -> Bool {
        FileManager.default.fileExists(atPath: marker(cache.repository(repo, type: type)).path)
    }

    /// Pins a cached repository.
    ///
    /// - Throws: `notCached` when it is not in the cache (pin after pulling).
    package func pin(_ repo: RepoID, type: RepoType = .model) throws {
        let repository = cache.repository(repo, type: type)
        guard FileManager.default.fileExists(atPath: repository.snapshotsFolder.path) else {
            throw ModelDepotError(
                .notCached, "\(repo) is not in the cache; pull it, then pin it.", remedy: .downloadFirst)
        }
        try HubCache.writeAtomically(Data(), to: marker(repository))
    }

    /// Removes the pin; nothing happens when there is none.
    package func unpin(_ repo: RepoID, type: RepoType = .model) {
        try? FileManager.default.removeItem(at: marker(cache.repository(repo, type: type)))
    }
}
