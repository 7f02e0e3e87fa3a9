import Foundation
import ModelDepotCache
import ModelDepotCore
import ModelDepotOCI
import ModelDepotPlatform
import ModelDepotTransfer
import ModelDepotTrust
import Synchronization

extension ModelManager {
    /// Pushes the cached snapshot of `repo` at `revision` to `reference` as a CNCF ModelPack artifact: one raw
    /// layer per file (ModelPack's weight, weight-config, doc and code types by path), the file's path in
    /// `org.cncf.model.filepath` and the OCI title, the Hub's blob names and SHA-256 in annotations, the repository
    /// and commit on the manifest, and a ModelPack config read from the first weight file's header (format,
    /// architecture, parameters, precision). Blobs the registry holds already are not sent (a HEAD by digest, then
    /// a mount from each of `mountFrom`); the rest go up in chunks, four files at a time; the manifest goes last, so
    /// the tag names a complete artifact or stays as it was.
    ///
    /// - Throws: `notCached` when the revision has no snapshot here; the registry's errors, named.
    public nonisolated func pushModelPack(
        _ repo: RepoID, type: RepoType = .model, revision: String = "main", to reference: OCIReference,
        client: RegistryClient, mountFrom: [String] = [],
        progress: @escaping @Sendable (_ sent: Int64, _ total: Int64) -> Void = { _, _ in }
    ) async throws -> OCIPushResult {
        guard let tag = reference.tag, reference.digest == nil else {
            throw ModelDepotError(
                .invalidArgument,
                "Push to a tag (\(reference.registry)/\(reference.repository):TAG), not to a digest: the registry computes it."
            )
        }
        let repository = cache.repository(repo, type: type)
        guard let commit = HubEncoding.isGitID(revision) ? revision : repository.commit(forRevision: revision),
            FileManager.default.fileExists(atPath: repository.snapshotFolder(commit).path)
        else {
            throw ModelDepotError(
                .notCached,
                "\(repo)@\(revision) is not in the cache at \(cache.root.path); pull it first (modeldepot pull \(repo))."
            )
        }
        let paths = CacheScanner.repositoryFiles(below: repository.snapshotFolder(commit))
        guard !paths.isEmpty else {
            throw ModelDepotError(
                .notCached, "The snapshot of \(repo)@\(commit.prefix(12)) holds no files; pull it first.")
        }
        let tree = repository.recordedTree(commit)
        let listed = tree?.files ?? [:]
        let filesNotCached = listed.keys.filter { !paths.contains($0) }.map(\.value).sorted()

        // Each file's digest: the blob's name when it is its SHA-256 (the cache verified it on the way in; the
        // registry checks it again when the upload closes), else hashed here, off the cooperative pool.
        let located = paths.map { ($0, repository.snapshotFile(commit, $0).resolvingSymlinksInPath()) }
        let files = try await BlockingWork.run {
            try located.map { path, url -> (ModelPackArtifact.File, URL) in
                guard let status = FileStatus(path: url.path), status.kind == .file else {
                    throw ModelDepotError(.fileSystem, "\(path) in the snapshot of \(repo) is not a readable file.")
                }
                let entry = listed[path]
                let blobName = url.lastPathComponent
                let sha256 =
                    HubEncoding.isSHA256(blobName) && entry?.lfsSHA256 == blobName
                    ? blobName : try FileDigests.sha256(ofFileAt: url.path)
                let file = ModelPackArtifact.File(
                    path: path, size: status.size, digest: OCIDigest(sha256Hex: sha256)!,
                    blobID: entry.map(\.blobID).flatMap { HubEncoding.isGitID($0) ? $0 : nil },
                    lfs: entry?.lfsSHA256 != nil || entry == nil)
                return (file, url)
            }
        }
        let artifact = ModelPackArtifact(
            files: files.map(\.0),
            hub: ModelPackArtifact.HubOrigin(
                repo: repo, type: type, commit: commit, revision: HubEncoding.isGitID(revision) ? nil : revision))
        let sources = Dictionary(uniqueKeysWithValues: files.map { ($0.0.path, $0.1) })

        let config = try await BlockingWork.run { try Self.modelPackConfig(artifact, sources: sources, repo: repo) }
        let configBytes = try config.encoded()
        let name = reference.repository
        let configDigest = try await client.pushSmallBlob(name, configBytes)

        let total = artifact.files.reduce(Int64(0)) { $0 + $1.size }
        let sentSoFar = ByteTally()
        var outcomes: [RegistryClient.BlobPush] = []
        try await withThrowingTaskGroup(of: RegistryClient.BlobPush.self) { group in
            var pending = artifact.files.sorted { $0.size > $1.size }.makeIterator()
            func addNext() -> Bool {
                guard let file = pending.next() else { return false }
                group.addTask {
                    try await client.pushBlob(
                        name, file: sources[file.path]!, digest: file.digest, size: file.size, mountFrom: mountFrom
                    ) { sent in
                        progress(sentSoFar.set(file.digest, to: sent), total)
                    }
                }
                return true
            }
            for _ in 0..<4 where addNext() {}
            while let outcome = try await group.next() {
                outcomes.append(outcome)
                _ = addNext()
            }
        }
        let manifest = artifact.manifest(
            config: OCIDescriptor(
                mediaType: OCIMediaType.modelConfig, digest: configDigest, size: Int64(configBytes.count)))
        let digest = try await client.pushManifest(
            name, reference: tag, try manifest.encoded(), mediaType: OCIMediaType.imageManifest)
        return OCIPushResult(
            reference: reference.description, digest: digest.description, repo: repo.description, commit: commit,
            files: artifact.files.count, bytes: total,
            blobsUploaded: outcomes.filter { if case .uploaded = $0 { true } else { false } }.count,
            blobsPresent: outcomes.filter { $0 == .present }.count,
            blobsMounted: outcomes.filter { if case .mounted = $0 { true } else { false } }.count,
            bytesUploaded: outcomes.reduce(0) { $0 + $1.bytesSent }, filesNotCached: filesNotCached)
    }

    /// The ModelPack config of `artifact`: its name and commit, and what the largest GGUF or safetensors file's
    /// header says (format, architecture, parameters, precision or quantization). Reads headers only.
    static func modelPackConfig(
        _ artifact: ModelPackArtifact, sources: [RepoFilePath: URL], repo: RepoID
    ) throws -> ModelPackConfig {
        var settings = ModelPackConfig.Config()
        let weights = artifact.files.filter {
            ["gguf", "safetensors"].contains(($0.path.value as NSString).pathExtension.lowercased())
        }
        if let largest = weights.max(by: { $0.size < $1.size }), let url = sources[largest.path],
            let summary = try? ModelFileSummary.read(path: url.path, named: largest.path.value)
        {
            settings.format = summary.format
            settings.architecture = summary.architecture
            // A sharded model's parameters are the sum over its shards; one header is one shard.
            let shards = weights.filter {
                ($0.path.value as NSString).pathExtension == (largest.path.value as NSString).pathExtension
            }
            if let parameters = summary.parameters, shards.count == 1 {
                settings.paramSize = ModelPackConfig.paramSize(parameters)
            }
            if let quantization = summary.quantization { settings.quantization = quantization.lowercased() }
            if let dtypes = summary.dtypes { settings.precision = dtypes.count == 1 ? dtypes[0].lowercased() : "mixed" }
        }
        return artifact.config(name: repo.description, settings: settings)
    }
}

/// Bytes moved per blob of a push or pull, summed for its progress: each transfer sets its own count.
final class ByteTally: Sendable {
    private let counts = Mutex<[OCIDigest: Int64]>([:])

    /// Sets `digest`'s count and returns the sum over all.
    func set(_ digest: OCIDigest, to bytes: Int64) -> Int64 {
        counts.withLock {
            $0[digest] = bytes
            return $0.values.reduce(0, +)
        }
    }
}
