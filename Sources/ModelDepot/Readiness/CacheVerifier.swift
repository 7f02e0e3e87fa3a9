import Foundation
import ModelDepotCache
import ModelDepotCore
import ModelDepotHub
import ModelDepotPlatform
import ModelDepotTransfer
import ModelDepotTrust

/// Re-hashes a repository's blobs against their names (64 hex: SHA-256; 40 hex: git blob id) and checks that
/// every file a snapshot's recorded tree lists is there.
public struct CacheVerifier: Sendable {
    /// The cache the verifier reads.
    package let cache: HubCache

    /// A verifier over `cache`.
    package init(cache: HubCache) {
        self.cache = cache
    }

    /// One file of one snapshot that is not as the Hub published it.
    public struct Problem: Sendable, Hashable, CustomStringConvertible {
        /// What is wrong with the file.
        public enum Kind: Sendable, Hashable {
            /// The blob's content does not hash to its name.
            case corrupt(actual: String)
            /// The snapshot lacks the file, or its link points at a missing blob.
            case missing
            /// The snapshot holds a file its recorded tree does not list (debris of an interrupted tool, or a
            /// file put there by hand); a loader walking the folder would see it. Repair removes it.
            case unlisted
        }

        /// What is wrong.
        public var kind: Kind
        /// The snapshot's commit.
        public var commit: String
        /// The file's path in the repository.
        public var path: RepoFilePath
        /// The blob file involved (absent for `missing` when the tree names no blob).
        public var blob: String?

        public var description: String {
            switch kind {
            case .corrupt(let actual):
                "corrupt  \(path) @ \(commit.prefix(12)): \(blob ?? "") hashes to \(actual)"
            case .missing: "missing  \(path) @ \(commit.prefix(12))"
            case .unlisted: "unlisted \(path) @ \(commit.prefix(12)): not a file of this commit"
            }
        }
    }

    /// What a verification found and how much it read.
    public struct Outcome: Sendable {
        /// Every problem found; empty when the repository is as published.
        public var problems: [Problem]
        /// Distinct blobs hashed and found good.
        public var verifiedBlobs: Int
        /// Blobs whose name is not a hash (other mirrors' ETags), so they cannot be checked.
        public var uncheckableBlobs: Int
        /// Bytes read to hash the blobs.
        public var bytesHashed: Int64
    }

    /// Verifies every snapshot of `repository`.
    package func verify(_ repository: CachedRepository, progress: (String) -> Void = { _ in }) throws -> Outcome {
        var outcome = Outcome(problems: [], verifiedBlobs: 0, uncheckableBlobs: 0, bytesHashed: 0)
        var results: [String: String?] = [:]  // blob → nil when good, else the actual digest
        var memory = VerificationMemory(repository: repository)
        defer { memory.save() }
        let snapshots = repository.snapshotsFolder.path
        for commit in Directory.names(snapshots).sorted() {
            let folder = snapshots + "/" + commit
            guard FileStatus(path: folder, followingLinks: true)?.kind == .folder else { continue }
            // Every entry but folders, broken links included (they are missing files).
            var paths = Set(
                Directory.walk(folder).compactMap { entry -> RepoFilePath? in
                    guard FileStatus(path: folder + "/" + entry.path, followingLinks: true)?.kind != .folder else {
                        return nil
                    }
                    return try? RepoFilePath(entry.path)
                })
            let tree = repository.recordedTree(commit)
            if let tree { paths.formUnion(tree.files.keys) }
            for path in paths.sorted() {
                if let tree, tree.files[path] == nil {
                    outcome.problems.append(Problem(kind: .unlisted, commit: commit, path: path, blob: nil))
                    continue
                }
                let file = folder + "/" + path.value
                guard FileStatus(path: file, followingLinks: true)?.kind == .file else {
                    let blob =
                        FileStatus(path: file, followingLinks: false)?.kind == .link
                        ? CacheScanner.blobPath(of: file) : nil
                    outcome.problems.append(Problem(kind: .missing, commit: commit, path: path, blob: blob))
                    continue
                }
                let blob = CacheScanner.blobPath(of: file)
                if results[blob] == nil {
                    let name = (blob as NSString).lastPathComponent
                    guard HubEncoding.isSHA256(name) || HubEncoding.isGitID(name) else {
                        outcome.uncheckableBlobs += 1
                        results[blob] = .some(nil)
                        continue
                    }
                    progress(path.value)
                    guard let actual = try FileDigests.digestPromisedByName(ofBlobAt: blob) else { continue }
                    outcome.bytesHashed += CacheScanner.regularFileSize(blob) ?? 0
                    results[blob] = .some(actual == name ? nil : actual)
                    memory.remember(blob: blob, ok: actual == name)
                    if actual == name { outcome.verifiedBlobs += 1 }
                }
                if case .some(.some(let actual)) = results[blob] {
                    outcome.problems.append(
                        Problem(kind: .corrupt(actual: actual), commit: commit, path: path, blob: blob))
                }
            }
        }
        return outcome
    }

    /// Removes corrupt blobs and unlisted snapshot entries, then downloads again exactly the files that were
    /// corrupt or missing.
    package func repair(
        _ repository: CachedRepository, problems: [Problem], using pull: SnapshotDownloader,
        progress: @escaping @Sendable (SnapshotProgress) -> Void = { _ in }
    ) async throws -> [Snapshot] {
        for problem in problems {
            switch problem.kind {
            case .corrupt: if let blob = problem.blob { unlink(blob) }
            case .unlisted: unlink(repository.snapshotFile(problem.commit, problem.path).path)
            case .missing: break
            }
        }
        var repaired: [Snapshot] = []
        let byCommit = Dictionary(grouping: problems.filter { $0.kind != .unlisted }, by: \.commit)
        for (commit, problems) in byCommit.sorted(by: { $0.key < $1.key }) {
            var request = SnapshotRequest(repo: repository.id, type: repository.type, revision: commit)
            request.selection.paths = Set(problems.map(\.path.value))
            repaired.append(try await pull.download(request, progress: progress))
        }
        return repaired
    }
}
