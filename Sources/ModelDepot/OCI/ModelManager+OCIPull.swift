import Foundation
import ModelDepotCache
import ModelDepotCore
import ModelDepotOCI
import ModelDepotPlatform
import ModelDepotTransfer
import ModelDepotTrust
import Synchronization

/// What a pull from an OCI registry did.
public struct OCIPullResult: Sendable, Codable, Equatable {
    /// The artifact pulled, and its manifest's digest.
    public var reference: String
    public var digest: String
    /// The Hub repository and commit the artifact says it is (nil for an artifact that names none).
    public var repo: String?
    public var commit: String?
    /// The snapshot folder in the cache, or the local directory.
    public var folder: String
    public var files: [String]
    public var filesDownloaded: Int
    public var bytesDownloaded: Int64
}

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

    /// The pull into a plain folder: staged in `.cache/modeldepot/oci/`, checked, then each file copied into place.
    /// Every destination is checked before any is written: inside the folder, not through a symbolic link, not a
    /// folder, not inside `.git` or the bookkeeping under `.cache/`.
    nonisolated func pullModelPack(
        _ artifact: ModelPackArtifact, from reference: OCIReference, client: RegistryClient, into folder: URL,
        unpacked: [RepoFilePath: URL], policy: DownloadPolicy, progress: @escaping @Sendable (Int64, Int64) -> Void
    ) async throws -> OCIPullResult {
        let root = folder.standardizedFileURL
        for file in artifact.files {
            try LocalDirectory.checkNotGit(file.path)
            if let first = file.path.components.first, Self.foldedName(first) == ".cache" {
                throw ModelDepotError(
                    .protocolViolation,
                    "\(reference) names \(file.path), inside the folder's .cache/ bookkeeping; refusing it.")
            }
        }
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let paths = artifact.files.map(\.path)
        try await BlockingWork.run { try Self.checkDestinations(paths, in: root) }
        let staging = root.appendingPathComponent(".cache/modeldepot/oci", isDirectory: true)
        try FileManager.default.createDirectory(at: staging, withIntermediateDirectories: true)
        let work = artifact.files.filter { unpacked[$0.path] == nil }
        // The layers staged, then each file copied into place.
        try checkSpace(for: artifact.files + work, in: root, name: reference.description)
        let total = work.reduce(Int64(0)) { $0 + $1.size }
        var (blobs, fetched, received) = try await fetchModelPackLayers(
            work, from: reference, client: client, total: total, progress: progress, verifiesExisting: true
        ) { file in
            let blob = staging.appendingPathComponent(file.digest.hex)
            return (
                blob, staging.appendingPathComponent(file.digest.hex + ".incomplete"),
                staging.appendingPathComponent(file.digest.hex + ".lock"), file.lfs ? nil : file.blobID
            )
        }
        blobs.merge(unpacked) { fetchedURL, _ in fetchedURL }
        fetched += unpacked.values
        let staged = blobs
        do {
            try await holdModelPack(blobs, to: policy, name: reference.description)
            try await BlockingWork.run {
                // Checked again right before writing: nothing put a link in the way meanwhile.
                try Self.checkDestinations(artifact.files.map(\.path), in: root)
                for file in artifact.files {
                    let destination = root.appendingPathComponent(file.path.value)
                    try FileManager.default.createDirectory(
                        at: destination.deletingLastPathComponent(), withIntermediateDirectories: true)
                    // A copy, not a move: the staged blob may serve two paths with the same bytes. The temporary's
                    // name is this pull's own, so two pulls into one folder never rename each other's half-copy.
                    let temporary = destination.deletingLastPathComponent().appendingPathComponent(
                        ".\(destination.lastPathComponent).\(UUID().uuidString).modeldepot-oci.incomplete")
                    do {
                        try FileManager.default.copyItem(atPath: staged[file.path]!.path, toPath: temporary.path)
                        try AtomicFile.moveIntoPlace(temporary.path, atPath: destination.path)
                    } catch {
                        try? FileManager.default.removeItem(at: temporary)
                        throw error
                    }
                }
            }
            for url in Set(blobs.values) { try? FileManager.default.removeItem(at: url) }
            // The staging folder goes when nothing else (another pull's partial or lock) is in it.
            if Directory.names(staging.path).isEmpty { try? FileManager.default.removeItem(at: staging) }
        } catch {
            for url in fetched { try? FileManager.default.removeItem(at: url) }
            throw error
        }
        return OCIPullResult(
            reference: reference.description, digest: reference.digest!.description,
            repo: artifact.hub?.repo.description,
            commit: artifact.hub?.commit, folder: root.path, files: artifact.files.map(\.path.value),
            filesDownloaded: fetched.count, bytesDownloaded: received)
    }

    /// A path component as a case-insensitive volume (APFS, NTFS) sees it: lower case, trailing dots and spaces gone.
    static func foldedName(_ component: String) -> String {
        var name = Substring(component.lowercased())
        while let last = name.last, last == "." || last == " " { name = name.dropLast() }
        return String(name)
    }

    /// Refuses to write `paths` under `root` where a symbolic link (or a file standing where a folder must be) is
    /// in the way, or where a folder is where the file goes: a pull never writes through a link it did not make.
    static func checkDestinations(_ paths: [RepoFilePath], in root: URL) throws {
        for path in paths {
            var current = root
            let components = path.components
            for (index, component) in components.enumerated() {
                current = current.appendingPathComponent(component)
                guard let status = FileStatus(path: current.path, followingLinks: false) else { break }
                let last = index == components.count - 1
                if status.kind == .link {
                    throw ModelDepotError(
                        .fileSystem,
                        "\(current.path) is a symbolic link; the pull does not write \(path) through it. Remove the link, or pull into another folder."
                    )
                }
                if last, status.kind == .folder {
                    throw ModelDepotError(
                        .fileSystem, "\(current.path) is a folder; the artifact's file \(path) cannot go there.")
                }
                if !last, status.kind != .folder {
                    throw ModelDepotError(
                        .fileSystem, "\(current.path) is a file; the artifact's \(path) needs a folder there.")
                }
            }
        }
    }

    /// Downloads `files`' layers, four at a time, each where `place` says (blob, partial, lock, and the git blob id
    /// to check besides the digest); a blob already there with the right size is kept (its name is its content).
    /// Returns where each file is, which blobs this pull wrote, and the bytes received.
    nonisolated func fetchModelPackLayers(
        _ files: [ModelPackArtifact.File], from reference: OCIReference, client: RegistryClient, total: Int64,
        progress: @escaping @Sendable (Int64, Int64) -> Void, verifiesExisting: Bool = false,
        place: @escaping @Sendable (ModelPackArtifact.File) -> (blob: URL, partial: URL, lock: URL, gitBlobID: String?)
    ) async throws -> (blobs: [RepoFilePath: URL], fetched: [URL], received: Int64) {
        let name = reference.repository
        // One HEAD first: it answers the registry's challenge, so the engine's ranged requests carry the token.
        if let first = files.first { _ = try await client.hasBlob(name, first.digest) }
        let headers = client.downloadHeaders(repository: name)
        let engine = pull.downloader
        let done = ByteTally()
        var blobs: [RepoFilePath: URL] = [:]
        var fetched: [URL] = []
        var received: Int64 = 0
        // Two paths with the same bytes are one layer: fetched once.
        var byDigest: [OCIDigest: [ModelPackArtifact.File]] = [:]
        for file in files { byDigest[file.digest, default: []].append(file) }
        do {
            try await withThrowingTaskGroup(of: (ModelPackArtifact.File, URL, Int64, Bool).self) { group in
                var pending = byDigest.values.map { $0[0] }.sorted { $0.size > $1.size }.makeIterator()
                func addNext() -> Bool {
                    guard let file = pending.next() else { return false }
                    group.addTask {
                        let spot = place(file)
                        // A blob of the cache is named by its content and was checked on its way in; a file staged in
                        // a folder anyone can write to is hashed before it is taken.
                        if CacheScanner.regularFileSize(spot.blob.path) == file.size {
                            let path = spot.blob.path
                            var intact = true
                            if verifiesExisting {
                                let actual = try? await BlockingWork.run { try FileDigests.sha256(ofFileAt: path) }
                                intact = actual == file.digest.hex
                            }
                            if intact {
                                _ = done.set(file.digest, to: file.size)
                                return (file, spot.blob, 0, false)
                            }
                            try? FileManager.default.removeItem(at: spot.blob)
                        }
                        try FileManager.default.createDirectory(
                            at: spot.blob.deletingLastPathComponent(), withIntermediateDirectories: true)
                        try FileManager.default.createDirectory(
                            at: spot.lock.deletingLastPathComponent(), withIntermediateDirectories: true)
                        // The engine checks the digest, and a git blob id the blob is named by, before the rename:
                        // a blob already named so is never replaced by other bytes.
                        func request(_ headers: [(name: String, value: String)]) -> DownloadRequest {
                            DownloadRequest(
                                url: client.blobURL(name, file.digest), destination: spot.blob,
                                expectedSHA256: file.digest.hex, expectedSize: file.size,
                                expectedGitBlobID: spot.gitBlobID, headers: headers
                            ).placingWorkFiles(
                                partial: spot.partial.path, resumeRecord: spot.partial.path + ".json",
                                sharedLock: spot.lock.path)
                        }
                        let report: @Sendable (DownloadProgress) -> Void = { update in
                            progress(done.set(file.digest, to: update.bytesCompleted), total)
                        }
                        let result: DownloadResult
                        do {
                            do {
                                result = try await engine.download(request(headers), progress: report)
                            } catch let error as ModelDepotError where error.code == .unauthorized {
                                // A registry token outlived (Docker Hub's last five minutes): a HEAD gets a fresh
                                // one, and the layer resumes with it, once.
                                _ = try await client.hasBlob(name, file.digest)
                                result = try await engine.download(
                                    request(client.downloadHeaders(repository: name)), progress: report)
                            }
                        } catch let error as ModelDepotError {
                            throw ModelDepotError(
                                error.code, "\(file.path) (layer \(file.digest) of \(reference)): \(error.message)",
                                underlying: error, retryAfter: error.retryAfter)
                        }
                        return (file, spot.blob, result.bytesReceived, !result.wasAlreadyPresent)
                    }
                    return true
                }
                for _ in 0..<4 where addNext() {}
                while let (file, blob, bytes, wrote) = try await group.next() {
                    for same in byDigest[file.digest] ?? [] { blobs[same.path] = blob }
                    if wrote { fetched.append(blob) }
                    received += bytes
                    _ = addNext()
                }
            }
        } catch {
            for url in fetched { try? FileManager.default.removeItem(at: url) }
            throw error
        }
        return (blobs, fetched, received)
    }

    /// Holds staged files to `policy`'s pickle rule: each file that may be a pickle is read, and a pickle refuses
    /// the pull, naming it.
    nonisolated func holdModelPack(_ files: [RepoFilePath: URL], to policy: DownloadPolicy, name: String) async throws {
        guard policy.refusePickle else { return }
        var findings: [PickleFinding] = []
        for (path, url) in files.sorted(by: { $0.key < $1.key }) where PickleFile.mayBePickle(path.value) {
            if let file = try await BlockingWork.run({ try PickleFile.inspect(url) }) {
                findings.append(PickleFinding(path: path.value, file: file, safetensorsAlternatives: []))
            }
        }
        guard !findings.isEmpty else { return }
        throw ModelDepotError(
            .unsafeFormat,
            "\(name) holds Python pickles, which can run code when loaded, and the policy refuses them: \(findings.map(\.description).joined(separator: "; ")). Pull without --refuse-pickle if you trust the publisher."
        )
    }

    /// Holds a staged artifact to the signature `requirement` names, as a Hub pull is held.
    nonisolated func checkModelPackSignature(
        _ staged: StagedSnapshot, _ requirement: SignatureRequirement, repository: CachedRepository, tree: RecordedTree
    ) async throws {
        let signaturePath = try RepoFilePath(requirement.path)
        // A signature is a few kilobytes: a layer claiming to be one is not read whole past 16 MiB.
        guard let signatureFile = staged.url(of: signaturePath),
            (CacheScanner.regularFileSize(signatureFile.path) ?? .max) <= 16 << 20,
            let bundle = FileManager.default.contents(atPath: signatureFile.path)
        else {
            throw ModelDepotError(
                .signatureInvalid, "\(staged.request.repo)'s signature at \(requirement.path) could not be read.")
        }
        let signed = try await ModelSignature(bundle: bundle, name: "\(staged.request.repo)/\(requirement.path)")
            .verified(
                by: requirement.trust)
        var present: [String: URL] = [:]
        for path in staged.files { present[path.value] = staged.url(of: path) }
        let commit = staged.commit
        _ = try await BlockingWork.run { [self, present] in
            try compare(
                signed, signaturePath: requirement.path, repository: repository, commit: commit, tree: tree,
                present: present)
        }
    }
}
