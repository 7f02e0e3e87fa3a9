import Foundation
import ModelDepotCore
import ModelDepotPlatform

/// What deleting some revisions of a repository removes, computed before anything is touched — Python's
/// `DeleteCacheStrategy` (the protocol note, §4.7): blobs another remaining revision still uses stay.
public struct DeletionPlan: Sendable, Equatable {
    /// Whole repository folders (every revision was selected).
    public var repositories: [String] = []
    /// Snapshot folders to remove.
    public var snapshots: [String] = []
    /// Ref files to remove.
    public var refs: [String] = []
    /// Blob files to remove (none another revision still uses).
    public var blobs: [String] = []
    /// Bytes the deletion frees.
    public var freedBytes: Int64 = 0

    /// Whether the plan removes nothing.
    public var isEmpty: Bool { repositories.isEmpty && snapshots.isEmpty && refs.isEmpty && blobs.isEmpty }

    /// Plans deleting `commits` of `repository` (every revision when nil).
    ///
    /// - Throws: `invalidArgument` naming the revisions that are not cached.
    package init(deleting commits: Set<String>?, of repository: CachedRepositoryReport) throws {
        let cached = Set(repository.revisions.map(\.commit))
        let selected = commits ?? cached
        let unknown = selected.subtracting(cached)
        guard unknown.isEmpty else {
            throw ModelDepotError(
                .invalidArgument,
                "\(repository.id) has no cached revision \(unknown.sorted().joined(separator: ", ")); cached: \(cached.sorted().joined(separator: ", "))."
            )
        }
        if selected == cached {
            repositories = [repository.folder.path]
            freedBytes = repository.sizeOnDisk
            return
        }
        let remainingBlobs = Set(
            repository.revisions.filter { !selected.contains($0.commit) }.flatMap { $0.entries.map(\.blob) })
        var doomed: [String: Int64] = [:]
        for revision in repository.revisions where selected.contains(revision.commit) {
            snapshots.append(repository.folder.appendingPathComponent("snapshots/\(revision.commit)").path)
            refs += revision.refs.map { repository.folder.appendingPathComponent("refs/\($0)").path }
            for entry in revision.entries where !remainingBlobs.contains(entry.blob) { doomed[entry.blob] = entry.size }
        }
        blobs = doomed.keys.sorted()
        freedBytes = doomed.values.reduce(0, +)
    }

    /// Deletes in an order that never leaves a ref or a link pointing at a deleted blob if interrupted:
    /// snapshots, then refs, then blobs. Paths already gone are skipped.
    package func execute() throws {
        for path in repositories + snapshots + refs + blobs {
            guard FileStatus(path: path, followingLinks: false)?.kind != nil else { continue }
            do {
                try FileManager.default.removeItem(atPath: path)
            } catch {
                throw ModelDepotError(
                    .fileSystem, "Cannot delete \(path): \(error.localizedDescription). Check its permissions.",
                    underlying: error)
            }
        }
    }
}
