import Foundation
import ModelDepotCache
import ModelDepotCore
import ModelDepotOCI
import ModelDepotPlatform
import ModelDepotTransfer
import ModelDepotTrust
import Synchronization

extension ModelManager {
    /// Pulls the ModelPack artifact `reference` names into the cache — as the snapshot of the Hub repository and
    /// commit its annotations name, so Python and `modeldepot path` find it — or into `localDirectory`.
    ///
    /// The manifest is checked against the digest asked for (or the one the registry announces), every field of it
    /// read as hostile (`ModelPackArtifact.read(_:name:)`), and every layer downloaded by the engine (parallel
    /// ranges, resumable) and checked against its digest, and a small file's git blob id against the Hub's, before
    /// anything is visible: the files are staged in `blobs/` (or `.cache/modeldepot/oci/` of the directory), held to
    /// `policy` (pickles refused, the signature checked), and only then linked (or moved into place). When the
    /// cache already records the commit's listing, every file must be the one listed.
    ///
    /// Into the cache, the files must be the commit's as the Hub lists them (asked now, when the cache has not
    /// recorded the listing): a registry is trusted no more than a mirror, so it cannot pass other bytes off as a Hub
    /// commit. Where the Hub cannot be asked, `policy`'s signature, a lock, or `trustingRegistry` vouches instead;
    /// an existing ref is never moved. A refusal leaves nothing the pull fetched.
    ///
    /// - Throws: `invalidArgument` for an artifact that names no Hub repository pulled without a directory;
    ///   `protocolViolation` for a manifest refused by name; `checksumMismatch` for bytes that are not what the
    ///   manifest says; `unsafeFormat`, `signatureInvalid` for what `policy` refuses.
    public nonisolated func pullModelPack(
        _ reference: OCIReference, client: RegistryClient, localDirectory: URL? = nil,
        policy: DownloadPolicy = DownloadPolicy(), trustingRegistry: Bool = false,
        progress: @escaping @Sendable (_ received: Int64, _ total: Int64) -> Void = { _, _ in }
    ) async throws -> OCIPullResult {
        try await pullModelPack(
            reference, client: client, localDirectory: localDirectory, policy: policy,
            trustingRegistry: trustingRegistry, confirmed: false, progress: progress)
    }

    /// ``pullModelPack(_:client:localDirectory:policy:trustingRegistry:progress:)``; `confirmed` when the caller held
    /// the artifact's files to a lock.
    nonisolated func pullModelPack(
        _ reference: OCIReference, client: RegistryClient, localDirectory: URL?, policy: DownloadPolicy,
        trustingRegistry: Bool, confirmed: Bool, progress: @escaping @Sendable (Int64, Int64) -> Void
    ) async throws -> OCIPullResult {
        let (manifest, digest) = try await Self.modelPackManifest(reference, client: client)
        let (listed, archives) = try ModelPackArtifact.read(manifest, name: reference.description)
        let pinned = reference.pinned(to: digest)
        if localDirectory == nil, listed.hub == nil {
            throw ModelDepotError(
                .invalidArgument,
                "\(reference) does not say which Hub repository and commit it is (no io.modeldepot.hub.* annotations), so it has no place in the cache; pull it with --local-dir DIR."
            )
        }
        if localDirectory != nil, policy.signature != nil {
            throw ModelDepotError(
                .invalidArgument,
                "A signature is checked on the cache's snapshot; pull \(reference) without --local-dir.")
        }
        // Tar layers (olot, modctl, KitOps) are unpacked first: their files join the raw layers' as staged files.
        var artifact = listed
        var unpacked: [RepoFilePath: URL] = [:]
        // A folder of this pull's own for the tar layers and what they hold: nothing another pull uses, all gone after.
        let unpacking =
            (localDirectory.map { $0.standardizedFileURL.appendingPathComponent(".cache/modeldepot/oci") }
            ?? cache.root.appendingPathComponent(".modeldepot/oci")).appendingPathComponent(
                "unpack-\(UUID().uuidString)")
        defer { if !archives.isEmpty { try? FileManager.default.removeItem(at: unpacking) } }
        if !archives.isEmpty {
            let result = try await unpackModelPackArchives(
                archives, from: pinned, client: client, into: unpacking, taken: Set(listed.files.map(\.path)))
            artifact = ModelPackArtifact(files: listed.files + result.files.map(\.0), hub: listed.hub)
            unpacked = Dictionary(uniqueKeysWithValues: result.files.map { ($0.0.path, $0.1) })
            try ModelPackArtifact.checkPaths(artifact.files.map(\.path), name: reference.description)
        }
        guard !artifact.files.isEmpty else {
            throw ModelDepotError(.protocolViolation, "\(reference) holds no files.")
        }
        if let localDirectory {
            return try await pullModelPack(
                artifact, from: pinned, client: client, into: localDirectory, unpacked: unpacked, policy: policy,
                progress: progress)
        }
        return try await pullModelPack(
            artifact, hub: artifact.hub!, from: pinned, client: client, unpacked: unpacked, policy: policy,
            trustingRegistry: trustingRegistry, confirmed: confirmed, progress: progress)
    }

    /// The manifest `reference` names, checked; an index is followed when it lists exactly one manifest.
    static func modelPackManifest(_ reference: OCIReference, client: RegistryClient) async throws -> (
        OCIManifest, OCIDigest
    ) {
        var fetched = try await client.manifest(reference.repository, reference: reference.manifestReference)
        let decoder = JSONDecoder()
        if [OCIMediaType.imageIndex, OCIMediaType.dockerManifestList].contains(fetched.mediaType)
            || (try? decoder.decode(OCIIndex.self, from: Data(fetched.bytes)))?.manifests.isEmpty == false
        {
            let index: OCIIndex
            do {
                index = try decoder.decode(OCIIndex.self, from: Data(fetched.bytes))
            } catch {
                throw ModelDepotError(.protocolViolation, "\(reference) sent an index that cannot be read: \(error).")
            }
            guard index.manifests.count == 1, let only = index.manifests.first else {
                throw ModelDepotError(
                    .protocolViolation,
                    "\(reference) is an index of \(index.manifests.count) manifests (an image for several platforms?); name one of them by digest (…@sha256:…)."
                )
            }
            fetched = try await client.manifest(reference.repository, reference: only.digest.description)
        }
        do {
            return (try decoder.decode(OCIManifest.self, from: Data(fetched.bytes)), fetched.digest)
        } catch {
            throw ModelDepotError(
                .protocolViolation, "\(reference) sent a manifest that cannot be read (\(error)).")
        }
    }

    /// The pull into the cache, as the snapshot of `hub`.
    ///
    /// Whose word makes the files the commit's: the cache's recorded listing of the commit, else the Hub's listing,
    /// asked now; or, where the Hub cannot be asked, a lock the caller checked (`confirmed`), a signature, or the
    /// registry's own, when trusted. Only a Hub listing is recorded as the commit's tree, an existing ref is never
    /// moved, and a blob named by a git blob id is checked against it before it is renamed into place.
    nonisolated func pullModelPack(
        _ artifact: ModelPackArtifact, hub: ModelPackArtifact.HubOrigin, from reference: OCIReference,
        client: RegistryClient, unpacked: [RepoFilePath: URL], policy: DownloadPolicy, trustingRegistry: Bool,
        confirmed: Bool, progress: @escaping @Sendable (Int64, Int64) -> Void
    ) async throws -> OCIPullResult {
        let repository = cache.repository(hub.repo, type: hub.type)
        let commit = hub.commit
        let recorded = repository.recordedTree(commit)
        var listing = recorded
        if listing == nil, !(confirmed || trustingRegistry || policy.signature != nil) {
            listing = try await hubListing(confirming: artifact, hub: hub, reference: reference)
        }
        // The name of each file's blob, as the listing gives it when there is one; what could be checked of the bytes.
        if let listing { try Self.check(artifact, against: listing, reference: reference, hub: hub) }
        var tree = RecordedTree(files: [:])
        for file in artifact.files {
            if let listing {
                tree.files[file.path] = listing.files[file.path]
            } else {
                tree.files[file.path] = RecordedTree.File(
                    size: file.size, blobID: file.blobID ?? "", lfsSHA256: file.lfs ? file.digest.hex : nil,
                    lfsSize: file.lfs ? file.size : nil)
            }
        }
        if let requirement = policy.signature, tree.files[try RepoFilePath(requirement.path)] == nil {
            throw ModelDepotError(
                .signatureInvalid,
                "\(reference) has no signature at \(requirement.path); refusing it (a signature is required).")
        }
        try cache.writeCacheDirectoryTag()
        let names = tree.files.mapValues(\.etag)
        // Files the snapshot holds already stay as they are (a pickle check reads them where they are).
        let needed = artifact.files.filter { !repository.hasFile($0.path, commit: commit) }
        try checkSpace(for: needed, in: cache.root, name: reference.description)
        // Unpacked files go to their blobs now, checked as a download is (a git blob id name is the content's).
        var moved: [URL] = []
        var blobs: [RepoFilePath: URL] = [:]
        do {
            for file in needed {
                guard let staged = unpacked[file.path] else { continue }
                let name = names[file.path]!
                let blob = repository.blob(name)
                if HubEncoding.isGitID(name),
                    try await BlockingWork.run({ try FileDigests.gitBlobID(ofFileAt: staged.path) }) != name
                {
                    throw ModelDepotError(
                        .checksumMismatch,
                        "\(file.path) of \(reference) is not the file the Hub lists for it; refusing it."
                    )
                }
                if CacheScanner.regularFileSize(blob.path) != file.size {
                    try HubCache.createFolder(blob.deletingLastPathComponent())
                    try AtomicFile.moveIntoPlace(staged.path, atPath: blob.path)
                    moved.append(blob)
                }
                blobs[file.path] = blob
            }
        } catch {
            for url in moved { try? FileManager.default.removeItem(at: url) }
            throw error
        }
        let work = needed.filter { unpacked[$0.path] == nil }
        let total = work.reduce(Int64(0)) { $0 + $1.size }
        let fetchedLayers: (blobs: [RepoFilePath: URL], fetched: [URL], received: Int64)
        do {
            fetchedLayers = try await fetchModelPackLayers(
                work, from: reference, client: client, total: total, progress: progress
            ) { file in
                let name = names[file.path]!
                return (
                    repository.blob(name), repository.partialBlob(name), repository.lockFile(name),
                    HubEncoding.isGitID(name) ? name : nil
                )
            }
        } catch {
            for url in moved { try? FileManager.default.removeItem(at: url) }
            throw error
        }
        blobs.merge(fetchedLayers.blobs) { unpackedURL, _ in unpackedURL }
        let fetched = fetchedLayers.fetched + moved
        let received = fetchedLayers.received
        var locations: [RepoFilePath: URL] = [:]
        for file in artifact.files {
            locations[file.path] =
                blobs[file.path] ?? repository.snapshotFile(commit, file.path).resolvingSymlinksInPath()
        }
        let staged = StagedSnapshot(
            request: SnapshotRequest(
                repo: hub.repo, type: hub.type,
                revision: try await confirmedRevision(hub, of: repository, asked: listing != nil && recorded == nil)),
            commit: commit, tree: recorded == nil ? listing : nil,
            locations: locations, blobs: blobs.mapValues { $0.lastPathComponent }, filesDownloaded: fetched.count,
            bytesDownloaded: received)
        do {
            try await holdModelPack(locations, to: policy, name: reference.description)
            if let requirement = policy.signature {
                try await checkModelPackSignature(staged, requirement, repository: repository, tree: tree)
            }
        } catch {
            // Refused: what this pull fetched goes again (blobs that were there before stay).
            for url in fetched { try? FileManager.default.removeItem(at: url) }
            throw error
        }
        // Once publishing starts, nothing is deleted: links made by now lead to these blobs.
        let snapshot = try await pull.publish(staged)
        return OCIPullResult(
            reference: reference.description, digest: reference.digest!.description, repo: hub.repo.description,
            commit: commit, folder: snapshot.folder.path, files: artifact.files.map(\.path.value),
            filesDownloaded: fetched.count, bytesDownloaded: received)
    }

    /// The ref the pull may point at its commit: the artifact's revision, only when the Hub says that revision names
    /// the commit (`asked`: the Hub was reachable a moment ago) and the cache has no such ref (or anything in its
    /// place); else the commit itself, which writes no ref. A registry never moves or makes a ref on its own word.
    nonisolated func confirmedRevision(
        _ hub: ModelPackArtifact.HubOrigin, of repository: CachedRepository, asked: Bool
    ) async throws -> String {
        guard asked, let revision = hub.revision,
            !FileManager.default.fileExists(atPath: repository.folder.appendingPathComponent("refs/\(revision)").path),
            let info = try? await pull.hub.repoInfo(hub.repo, type: hub.type, revision: revision),
            info.sha?.lowercased() == hub.commit
        else { return hub.commit }
        return revision
    }

    /// The Hub's listing of the commit `hub` names, asked now: what confirms an artifact's files are that commit's.
    ///
    /// - Throws: what the Hub answered, said as the artifact unconfirmed, with the ways to pull it anyway.
    nonisolated func hubListing(
        confirming artifact: ModelPackArtifact, hub: ModelPackArtifact.HubOrigin, reference: OCIReference
    ) async throws -> RecordedTree {
        do {
            return try RecordedTree(
                entries: try await pull.hub.listFiles(hub.repo, type: hub.type, revision: hub.commit))
        } catch let error as ModelDepotError {
            throw ModelDepotError(
                error.code == .repositoryNotFound || error.code == .revisionNotFound ? .checksumMismatch : error.code,
                "\(reference) says it is \(hub.repo)@\(hub.commit.prefix(12)), and \(pull.hub.endpoint.absoluteString) could not confirm its files (\(error.message)). Pull it with --trust-registry to take the registry's word, with --require-signature, or from a lock (pull --locked).",
                underlying: error)
        }
    }

    /// Refuses `artifact` unless each of its files is the one `listing` lists (size, and SHA-256 or git blob id).
    static func check(
        _ artifact: ModelPackArtifact, against listing: RecordedTree, reference: OCIReference,
        hub: ModelPackArtifact.HubOrigin
    ) throws {
        for file in artifact.files {
            guard let listed = listing.files[file.path], listed.size == file.size,
                listed.lfsSHA256.map({ $0 == file.digest.hex }) ?? (file.blobID == nil || file.blobID == listed.blobID)
            else {
                throw ModelDepotError(
                    .checksumMismatch,
                    "\(reference) says it is \(hub.repo)@\(hub.commit.prefix(12)), but its \(file.path) is not the file the Hub lists for that commit; refusing it."
                )
            }
        }
    }

    /// Refuses a pull of `files` that the volume of `folder` has no room for, before any byte is fetched.
    nonisolated func checkSpace(for files: [ModelPackArtifact.File], in folder: URL, name: String) throws {
        let needed = files.reduce(Int64(0)) { $0 + $1.size }
        var probe = folder
        while !FileManager.default.fileExists(atPath: probe.path), probe.pathComponents.count > 1 {
            probe.deleteLastPathComponent()
        }
        guard needed > 0, let available = try? VolumeSpace.availableBytes(atPath: probe.path), available < needed
        else { return }
        throw ModelDepotError(
            .insufficientDiskSpace,
            "Not enough disk space for \(name) in \(folder.path): it needs \(ByteFormat.string(needed)), \(ByteFormat.string(available)) are free.",
            remedy: .freeSpace)
    }

}
