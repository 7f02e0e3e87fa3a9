import Foundation
import ModelDepotCore
import ModelDepotOCI
import ModelDepotTrust
import Synchronization

extension ModelLock {
    /// What to lock: a repository at a branch, tag or commit, and which of its files.
    public struct Target: Sendable, Hashable {
        public var repo: RepoID
        public var type: RepoType
        public var revision: String
        public var source: Source

        public init(repo: RepoID, type: RepoType = .model, revision: String = "main", source: Source = Source()) {
            self.repo = repo
            self.type = type
            self.revision = revision
            self.source = source
        }

        /// Exactly a catalog entry's variant, at its pinned revision.
        public init(_ entry: CatalogEntry) {
            self.init(
                repo: entry.repo, type: entry.repoType, revision: entry.revision ?? "main",
                source: Source(catalog: entry.name, include: entry.files))
        }
    }

    /// A difference between a lock and a cache (`verify --lock`), in words.
    public struct Problem: Sendable, Hashable, CustomStringConvertible {
        public var repo: RepoID
        public var path: String?
        public var message: String
        public var description: String { "\(repo)\(path.map { "/\($0)" } ?? ""): \(message)" }
    }

    /// A locked branch that has moved on at its endpoint (`lock --check`).
    public struct Drift: Sendable, Hashable {
        public var repo: RepoID
        public var revision: String
        public var locked: String
        public var now: String
    }
}

extension ModelManager {
    /// Resolves `targets` at the manager's endpoint: each revision to its commit, each selection to its files
    /// with their sizes and digests as the Hub lists them. Downloads nothing.
    ///
    /// - Throws: what the Hub answers (no such repository or revision), and `invalidArgument` when a selection
    ///   matches no file.
    public func lock(_ targets: [ModelLock.Target]) async throws -> ModelLock {
        var repositories: [String: ModelLock.Repository] = [:]
        for target in targets {
            let info = try await pull.hub.repoInfo(target.repo, type: target.type, revision: target.revision)
            guard let commit = info.sha?.lowercased(), HubEncoding.isGitID(commit) else {
                throw ModelDepotError(
                    .protocolViolation,
                    "\(pull.hub.endpoint.absoluteString) did not say which commit \(target.revision) of \(target.repo) is."
                )
            }
            let selection = FileSelection(include: target.source.include, exclude: target.source.exclude)
            let files = try await pull.hub.listFiles(target.repo, type: target.type, revision: commit)
                .filter { $0.isFile && selection.selects($0.path) }.map(ModelLock.File.init)
            guard !files.isEmpty else {
                throw ModelDepotError(
                    .invalidArgument,
                    "No file of \(target.repo)@\(target.revision) matches \(target.source.include.joined(separator: ", ")); nothing to lock."
                )
            }
            let key = "\(target.type.rawValue) \(target.repo)"
            if var known = repositories[key] {
                // The same repository twice (two catalog entries of one repo): one entry, the union of files.
                guard known.commit == commit else {
                    throw ModelDepotError(
                        .invalidArgument,
                        "\(target.repo) is asked for at two revisions; a lock pins one commit per repository.")
                }
                let merged = Dictionary((known.files + files).map { ($0.path, $0) }, uniquingKeysWith: { a, _ in a })
                known.files = merged.values.sorted { $0.path < $1.path }
                known.source.include = Array(Set(known.source.include + target.source.include)).sorted()
                repositories[key] = known
            } else {
                repositories[key] = ModelLock.Repository(
                    endpoint: pull.hub.endpoint.absoluteString, type: target.type, repo: target.repo,
                    revision: target.revision, commit: commit, source: target.source, files: files)
            }
        }
        return ModelLock(repositories: Array(repositories.values))
    }

    /// Pulls exactly what `lock` names, from the manager's endpoint (or mirrors): each repository at its locked
    /// commit, only the locked files. Before anything is fetched, the endpoint's listing at that commit must
    /// agree with the lock on every file's size and digest; after the pull each file is checked against the lock.
    ///
    /// The task is started; its `result()` throws `checksumMismatch` naming the first file that differs,
    /// `entryNotFound` for a locked file the endpoint lacks, and whatever the pull throws. What an earlier
    /// repository pulled stays.
    public func download(lock: ModelLock) -> LockDownloadTask {
        download(lock: lock) { reference in
            RegistryClient(
                registry: reference.registryURL, credential: try RegistryCredential.stored(for: reference.registry))
        }
    }

    /// Pulls exactly what `lock` names, as ``download(lock:)`` does; a repository whose entry names an OCI artifact
    /// (`ModelLock.Repository.oci`) comes from there, through the client `registries` gives for its registry.
    public func download(
        lock: ModelLock, registries: @escaping @Sendable (OCIReference) throws -> RegistryClient
    ) -> LockDownloadTask {
        // What earlier runs of this task published: a resume after a pause or a failure goes on from there.
        let published = PublishedSnapshots()
        let task = LockDownloadTask(request: lock) { report in
            try await self.pullLocked(lock, registries: registries, published: published, progress: report)
        }
        task.resume()
        return task
    }

    /// The lock's pull, repository by repository, as ``download(lock:registries:)`` describes it.
    private func pullLocked(
        _ lock: ModelLock, registries: @escaping @Sendable (OCIReference) throws -> RegistryClient,
        published: PublishedSnapshots, progress: @escaping @Sendable (LockProgress) -> Void
    ) async throws -> [Snapshot] {
        var snapshots = published.snapshots.withLock { $0 }
        // Every file is held to the lock before it is published, so a mirror found on the network may list too.
        let pull = self.pull.answeringListingsFromDiscoveredMirrors
        let total = lock.repositories.count
        for repository in lock.repositories.dropFirst(snapshots.count) {
            let done = snapshots.count
            progress(LockProgress(repositoriesCompleted: done, totalRepositories: total, repository: repository.repo))
            if repository.oci != nil {
                snapshots.append(try await pullLockedModelPack(repository, registries: registries))
                published.snapshots.withLock { $0 = snapshots }
                progress(LockProgress(repositoriesCompleted: snapshots.count, totalRepositories: total))
                continue
            }
            let listing = try await pull.hub.listFiles(
                repository.repo, type: repository.type, revision: repository.commit)
            let listed = Dictionary(
                listing.filter(\.isFile).map { ($0.path, ModelLock.File($0)) }, uniquingKeysWith: { a, _ in a })
            for file in repository.files {
                guard let offered = listed[file.path] else {
                    throw ModelDepotError(
                        .entryNotFound,
                        "\(pull.hub.endpoint.absoluteString) has no \(file.path) in \(repository.repo) at \(repository.commit), which the lock names."
                    )
                }
                guard offered == file else {
                    throw ModelDepotError(
                        .checksumMismatch,
                        "\(pull.hub.endpoint.absoluteString) offers \(file.path) of \(repository.repo)@\(repository.commit.prefix(12)) as \(offered.size) bytes, \(offered.digestText); the lock says \(file.size) bytes, \(file.digestText). Refusing it."
                    )
                }
            }
            let request = SnapshotRequest(
                repo: repository.repo, type: repository.type, revision: repository.commit,
                files: repository.files.map(\.path))
            // Staged, checked, then published: files that do not match the lock are never linked.
            var stage = try await pull.stage(request) { current in
                progress(
                    LockProgress(
                        repositoriesCompleted: done, totalRepositories: total, repository: repository.repo,
                        current: current))
            }
            // A discovered mirror's listing vouches for nothing beyond the locked files: not recorded as the tree.
            if pull.hub.discoveredListings?.happened == true { stage.tree = nil }
            let staged = stage
            // Hashes every locked file: off the cooperative pool.
            if let problem = try await BlockingWork.run({ self.verify(repository, staged: staged).first }) {
                throw ModelDepotError(
                    .checksumMismatch,
                    "After the pull, \(problem). Nothing of \(repository.repo)@\(repository.commit.prefix(12)) was placed in the snapshot."
                )
            }
            snapshots.append(try await pull.publish(staged))
            published.snapshots.withLock { $0 = snapshots }
            progress(LockProgress(repositoriesCompleted: snapshots.count, totalRepositories: total))
        }
        return snapshots
    }

    /// Checks the cache against `lock`: every locked file present at its commit with its size and digest (each
    /// file is hashed). No network.
    ///
    /// Hashing runs off Swift's cooperative pool.
    public nonisolated func verify(lock: ModelLock) async -> [ModelLock.Problem] {
        // The closure throws nothing, so neither does the hand-off.
        (try? await BlockingWork.run { self.problems(in: lock) }) ?? []
    }

    /// ``verify(lock:)`` on the calling thread, for callers already off the pool (a bundle's export).
    nonisolated func problems(in lock: ModelLock) -> [ModelLock.Problem] {
        lock.repositories.flatMap { verify($0) }
    }

    /// Checks one locked repository's files: in the cache's snapshot, or where a staged pull holds them.
    nonisolated func verify(_ repository: ModelLock.Repository, staged: StagedSnapshot? = nil) -> [ModelLock.Problem] {
        let cached = cache.repository(repository.repo, type: repository.type)
        func problem(_ path: String?, _ message: String) -> ModelLock.Problem {
            ModelLock.Problem(repo: repository.repo, path: path, message: message)
        }
        guard staged != nil || FileManager.default.fileExists(atPath: cached.snapshotFolder(repository.commit).path)
        else {
            return [problem(nil, "commit \(repository.commit) is not in the cache; pull the lock first")]
        }
        return repository.files.compactMap { file -> ModelLock.Problem? in
            guard let path = try? RepoFilePath(file.path) else { return problem(file.path, "not a file path") }
            // Snapshot entries are links into blobs/: size and hash what they lead to.
            let url =
                staged?.url(of: path) ?? cached.snapshotFile(repository.commit, path).resolvingSymlinksInPath()
            return file.mismatch(at: url).map { problem(file.path, $0) }
        }
    }

    /// The locked branches and tags that name another commit now at the manager's endpoint (commits pinned by
    /// id never move).
    public func drift(of lock: ModelLock) async throws -> [ModelLock.Drift] {
        var moved: [ModelLock.Drift] = []
        for repository in lock.repositories where !HubEncoding.isGitID(repository.revision) {
            let info = try await pull.hub.repoInfo(
                repository.repo, type: repository.type, revision: repository.revision)
            if let now = info.sha?.lowercased(), now != repository.commit {
                moved.append(
                    ModelLock.Drift(
                        repo: repository.repo, revision: repository.revision, locked: repository.commit, now: now))
            }
        }
        return moved
    }

    /// The lock made again from what each repository's source names now (`lock --update`).
    ///
    /// An entry locked from an OCI artifact is locked again from what its tag names now.
    public func updated(_ lock: ModelLock) async throws -> ModelLock {
        try await updated(lock) { reference in
            RegistryClient(
                registry: reference.registryURL, credential: try RegistryCredential.stored(for: reference.registry))
        }
    }

    /// ``updated(_:)``, asking registries through the clients `registries` gives.
    public func updated(
        _ lock: ModelLock, registries: @escaping @Sendable (OCIReference) throws -> RegistryClient
    ) async throws -> ModelLock {
        var fromHub = try await self.lock(
            lock.repositories.filter { $0.oci == nil }.map {
                ModelLock.Target(repo: $0.repo, type: $0.type, revision: $0.revision, source: $0.source)
            }
        ).repositories
        for repository in lock.repositories {
            guard let oci = repository.oci else { continue }
            var reference = try OCIReference(parsing: oci)
            if reference.tag != nil { reference.digest = nil }
            fromHub.append(try await lockModelPack(reference, client: try registries(reference)))
        }
        return ModelLock(repositories: fromHub)
    }
}

/// The snapshots a lock task's runs have published so far, kept across a pause or a failure so a resumed run goes
/// on from the next repository.
final class PublishedSnapshots: Sendable {
    let snapshots = Mutex<[Snapshot]>([])
}
