import Foundation
import ModelDepotCache
import ModelDepotCore
import ModelDepotOCI
import ModelDepotTransfer
import Synchronization

/// The ModelPack artifact of each served commit, made when a registry client first asks: one raw layer per file,
/// named as `modeldepot push` names them, so `skopeo`, `oras`, containerd and Kubernetes' ImageVolume pull a
/// model from the mirror with the blobs it already serves (no copy). A commit's artifact never changes, so it is
/// made once and remembered (the last ``limit`` of them); its manifest digest names the commit to registry clients.
///
/// The config says what the mirror knows without reading weights: the repository, the commit and the layers. (A
/// pushed artifact's config also carries what the weights' headers say, which the mirror does not read, so the two
/// artifacts of one commit have different digests.)
final class ModelPackManifests: Sendable {
    /// One commit's artifact.
    struct Built: Sendable {
        let snapshot: RepoSnapshot
        let manifest: [UInt8]
        let digest: OCIDigest
        let config: [UInt8]
        let configDigest: OCIDigest
        /// The served file behind each layer digest.
        let layers: [OCIDigest: ServedFile]
    }

    /// How many commits' artifacts are remembered.
    static let limit = 256

    private let built = Mutex<(entries: [String: Built], order: [String])>(([:], []))
    /// SHA-256 of small files by git blob id: they are hashed once (the listing names them by git blob id only).
    private let hashes = Mutex<[String: String]>([:])

    /// The artifact of `snapshot`'s commit, made now unless remembered.
    ///
    /// - Throws: ``HubServerError`` when a file's content cannot be read to name its layer.
    func artifact(of snapshot: RepoSnapshot) async throws -> Built {
        let key = "\(snapshot.type.rawValue)/\(snapshot.id)@\(snapshot.commit)"
        if let known = built.withLock({ $0.entries[key] }) { return known }
        var files: [ModelPackArtifact.File] = []
        var layers: [OCIDigest: ServedFile] = [:]
        for file in snapshot.files {
            let sha256 = try await sha256(of: file, in: snapshot)
            let digest = OCIDigest(sha256Hex: sha256)!
            files.append(
                ModelPackArtifact.File(
                    path: file.path, size: file.size, digest: digest, blobID: file.gitOID, lfs: file.isLFS))
            layers[digest] = layers[digest] ?? file
        }
        let artifact = ModelPackArtifact(
            files: files,
            hub: ModelPackArtifact.HubOrigin(
                repo: snapshot.id, type: snapshot.type, commit: snapshot.commit, revision: nil))
        let config = try artifact.config(name: snapshot.id.description).encoded()
        let configDigest = OCIDigest(of: config)
        let manifest = try artifact.manifest(
            config: OCIDescriptor(mediaType: OCIMediaType.modelConfig, digest: configDigest, size: Int64(config.count))
        ).encoded()
        let made = Built(
            snapshot: snapshot, manifest: manifest, digest: OCIDigest(of: manifest), config: config,
            configDigest: configDigest, layers: layers)
        built.withLock { state in
            if state.entries.updateValue(made, forKey: key) == nil { state.order.append(key) }
            while state.order.count > Self.limit { state.entries[state.order.removeFirst()] = nil }
        }
        return made
    }

    /// A remembered artifact of repository `id` that `digest` names: its manifest, its config or one of its layers.
    func remembered(_ id: RepoID, holding digest: OCIDigest) -> Built? {
        built.withLock { state in
            state.entries.values.first { built in
                built.snapshot.id == id
                    && (built.digest == digest || built.configDigest == digest || built.layers[digest] != nil)
            }
        }
    }

    /// A file's SHA-256: the listing's for LFS files; else the content's, hashed once (a pull-through mirror
    /// fetches the small file first).
    private func sha256(of file: ServedFile, in snapshot: RepoSnapshot) async throws -> String {
        if let sha256 = file.sha256 { return sha256 }
        if let known = hashes.withLock({ $0[file.gitOID] }) { return known }
        if CacheScanner.regularFileSize(file.diskPath) != file.size, let pullThrough = snapshot.pullThrough,
            let pull = try pullThrough.pull(file, of: snapshot)
        {
            var offset: Int64 = 0
            while offset < file.size {
                guard let end = await pull.releasable(from: offset) else { break }
                offset = end
            }
            // The last byte is released with the verdict: a verified blob is in place now.
            _ = await pull.releasable(from: max(0, file.size - 1))
        }
        let path = file.diskPath
        let size = file.size
        let hashed = try await BlockingWork.run { () -> String? in
            guard CacheScanner.regularFileSize(path) == size else { return nil }
            return try FileDigests.sha256(ofFileAt: path)
        }
        guard let hashed else {
            throw HubServerError(
                status: 503, code: nil,
                message:
                    "\(file.path) of \(snapshot.id) is not at hand to name its layer; try again once it is pulled.",
                commit: snapshot.commit)
        }
        hashes.withLock { hashes in
            // Bounded: a mirror serving millions of small files forgets and hashes again rather than growing.
            if hashes.count >= 65536 { hashes.removeAll() }
            hashes[file.gitOID] = hashed
        }
        return hashed
    }
}
