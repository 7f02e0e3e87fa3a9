import Foundation
import ModelDepotCore
import ModelDepotOCI
import ModelDepotTrust

extension ModelManager {
    /// The lock entry of the artifact `reference` names: the Hub repository and commit its annotations name, each
    /// file's size and digest as its layer gives them (the SHA-256 of an LFS file, the git blob id of another), and
    /// the artifact pinned by its manifest's digest (`ModelLock.Repository.oci`): "this commit is this digest".
    ///
    /// The files are held to the Hub's listing of the commit first (recorded in the cache, else asked now), as a
    /// pull is, unless `trustingRegistry`: a lock vouches for what it names when pulled.
    ///
    /// - Throws: `invalidArgument` for an artifact that names no Hub commit or holds tar layers (whose files are known
    ///   only once unpacked: pull it, then lock the repository); the pull's errors for a manifest refused or a file
    ///   the Hub lists otherwise.
    public nonisolated func lockModelPack(
        _ reference: OCIReference, client: RegistryClient, trustingRegistry: Bool = false
    ) async throws -> ModelLock.Repository {
        try await lockModelPack(reference, client: client, confirming: !trustingRegistry)
    }

    /// ``lockModelPack(_:client:trustingRegistry:)``; `confirming`: the files are held to the Hub's listing of the
    /// commit (the cache's recorded one, else asked now) before they are written into a lock.
    nonisolated func lockModelPack(_ reference: OCIReference, client: RegistryClient, confirming: Bool) async throws
        -> ModelLock.Repository
    {
        let (manifest, digest) = try await Self.modelPackManifest(reference, client: client)
        let (artifact, archives) = try ModelPackArtifact.read(manifest, name: reference.description)
        guard let hub = artifact.hub else {
            throw ModelDepotError(
                .invalidArgument,
                "\(reference) does not say which Hub repository and commit it is, so a lock cannot name it; push it with modeldepot push."
            )
        }
        guard archives.isEmpty else {
            throw ModelDepotError(
                .invalidArgument,
                "\(reference) holds tar layers, whose files are known only once unpacked; pull it, then lock \(hub.repo)@\(hub.commit)."
            )
        }
        if confirming {
            let recorded = cache.repository(hub.repo, type: hub.type).recordedTree(hub.commit)
            let listing: RecordedTree
            if let recorded {
                listing = recorded
            } else {
                listing = try await hubListing(confirming: artifact, hub: hub, reference: reference)
            }
            try Self.check(artifact, against: listing, reference: reference, hub: hub)
        }
        return ModelLock.Repository(
            endpoint: pull.hub.endpoint.absoluteString, type: hub.type, repo: hub.repo,
            revision: hub.revision ?? hub.commit, commit: hub.commit, source: ModelLock.Source(),
            files: artifact.files.map { file in
                file.lfs
                    ? ModelLock.File(path: file.path.value, size: file.size, sha256: file.digest.hex)
                    : ModelLock.File(path: file.path.value, size: file.size, gitBlob: file.blobID)
            },
            oci: reference.pinned(to: digest).description)
    }

    /// Checks the cache's snapshot of the commit an artifact names against the artifact: every file present, with
    /// its layer's size and digest (each file hashed, off the cooperative pool).
    public nonisolated func verifyModelPack(_ reference: OCIReference, client: RegistryClient) async throws
        -> [ModelLock.Problem]
    {
        await verify(
            lock: ModelLock(repositories: [try await lockModelPack(reference, client: client, confirming: false)]))
    }

    /// Pulls a locked repository from the OCI artifact its lock entry names, refusing the artifact unless it holds
    /// exactly the locked commit and files (checked before any layer is fetched).
    nonisolated func pullLockedModelPack(
        _ repository: ModelLock.Repository, registries: @Sendable (OCIReference) throws -> RegistryClient
    ) async throws -> Snapshot {
        let reference = try OCIReference(parsing: repository.oci ?? "")
        guard reference.digest != nil else {
            throw ModelDepotError(
                .invalidArgument, "The lock names \(reference) for \(repository.repo) without a digest; lock it again.")
        }
        let client = try registries(reference)
        let offered = try await lockModelPack(reference, client: client, confirming: false)
        guard offered.repo == repository.repo, offered.type == repository.type, offered.commit == repository.commit,
            offered.files == repository.files
        else {
            let differing =
                offered.commit != repository.commit
                ? "it is \(offered.repo)@\(offered.commit.prefix(12))"
                : "its files differ (\(Set(offered.files).symmetricDifference(repository.files).map(\.path).sorted().prefix(5).joined(separator: ", ")))"
            throw ModelDepotError(
                .checksumMismatch,
                "\(reference) is not what the lock names for \(repository.repo)@\(repository.commit.prefix(12)): \(differing). Refusing it."
            )
        }
        let pulled = try await pullModelPack(
            reference, client: client, localDirectory: nil, policy: DownloadPolicy(), trustingRegistry: false,
            confirmed: true, progress: { _, _ in })
        // Files the snapshot held already were not fetched: they are held to the lock too.
        if let problem = try await BlockingWork.run({ self.verify(repository).first }) {
            throw ModelDepotError(
                .checksumMismatch, "After the pull of \(reference), \(problem). Run modeldepot verify --repair.")
        }
        let folder = URL(fileURLWithPath: pulled.folder)
        return Snapshot(
            repo: repository.repo, type: repository.type, commit: repository.commit, folder: folder,
            files: try pulled.files.map { try RepoFilePath($0) }, filesDownloaded: pulled.filesDownloaded,
            bytesDownloaded: pulled.bytesDownloaded)
    }
}
