import Foundation
import ModelDepotCore

/// A model as a ModelPack artifact: the file of each layer, and which Hub repository and commit it is. Built from
/// a cached revision to push (and by the mirror, which serves every revision as one), read back from a manifest
/// to pull, where every field is hostile until checked.
public struct ModelPackArtifact: Sendable, Equatable {
    /// One file of the model, one raw layer.
    public struct File: Sendable, Equatable {
        public var path: RepoFilePath
        public var size: Int64
        /// The layer's digest: the file's SHA-256.
        public var digest: OCIDigest
        /// The git blob id the Hub lists for the file (the cache names small files' blobs by it).
        public var blobID: String?
        /// Whether the Hub stores the file with LFS (its cache blob is named by the SHA-256).
        public var lfs: Bool
        /// The layer's media type; a raw layer of ModelPack's type for the path when pushing.
        public var mediaType: String

        public init(
            path: RepoFilePath, size: Int64, digest: OCIDigest, blobID: String?, lfs: Bool, mediaType: String? = nil
        ) {
            self.path = path
            self.size = size
            self.digest = digest
            self.blobID = blobID
            self.lfs = lfs
            self.mediaType = mediaType ?? OCIMediaType.rawLayerType(forPath: path.value)
        }

        /// The name of the file's blob in a Hugging Face cache: the SHA-256 for LFS files (and files without a git
        /// blob id), else the git blob id.
        public var cacheBlobName: String { lfs || blobID == nil ? digest.hex : blobID! }
    }

    /// Which Hub repository revision the artifact is.
    public struct HubOrigin: Sendable, Equatable {
        public var repo: RepoID
        public var type: RepoType
        public var commit: String
        /// The branch or tag the commit was pushed as (`main`), when one was named.
        public var revision: String?

        public init(repo: RepoID, type: RepoType, commit: String, revision: String?) {
            self.repo = repo
            self.type = type
            self.commit = commit
            self.revision = revision
        }
    }

    public var files: [File]
    public var hub: HubOrigin?

    public init(files: [File], hub: HubOrigin?) {
        self.files = files.sorted { $0.path < $1.path }
        self.hub = hub
    }

    // MARK: - Writing

    /// The manifest of this artifact with `config` (a ModelPack config blob's descriptor): ModelPack's artifact
    /// type, one raw layer per file in path order, each named by `org.cncf.model.filepath` and the OCI title (which
    /// `oras` names pulled files by), the Hub's blob names and the file's SHA-256 in ModelDepot's annotations, the
    /// Hub repository and commit on the manifest.
    public func manifest(config: OCIDescriptor) -> OCIManifest {
        let layers = files.map { file in
            var annotations = [
                OCIMediaType.filePathAnnotation: file.path.value,
                OCIMediaType.titleAnnotation: file.path.value,
                OCIMediaType.fileSHA256Annotation: file.digest.hex,
            ]
            if let blobID = file.blobID { annotations[OCIMediaType.hubBlobIDAnnotation] = blobID }
            if file.lfs { annotations[OCIMediaType.hubLFSAnnotation] = "true" }
            return OCIDescriptor(
                mediaType: file.mediaType, digest: file.digest, size: file.size, annotations: annotations)
        }
        var annotations: [String: String]?
        if let hub {
            annotations = [
                OCIMediaType.hubRepositoryAnnotation: hub.repo.description,
                OCIMediaType.hubTypeAnnotation: hub.type.rawValue,
                OCIMediaType.hubCommitAnnotation: hub.commit,
            ]
            if let revision = hub.revision { annotations?[OCIMediaType.hubRevisionAnnotation] = revision }
        }
        return OCIManifest(
            artifactType: OCIMediaType.modelManifest, config: config, layers: layers, annotations: annotations)
    }

    /// The ModelPack config of this artifact: its name and commit, `settings` (what a weight file's header says,
    /// when it was read), and the digests of its layers' contents in layer order (raw layers: their digests).
    public func config(name: String, settings: ModelPackConfig.Config = ModelPackConfig.Config()) -> ModelPackConfig {
        ModelPackConfig(
            descriptor: ModelPackConfig.Descriptor(name: name, revision: hub?.commit),
            config: settings, modelfs: ModelPackConfig.ModelFS(diffIDs: files.map(\.digest)))
    }

    // MARK: - Reading

    /// The most layers a pulled manifest may have.
    public static let maximumLayers = 4096
    /// The largest layer a pull accepts (4 TiB): a size past it is a lie.
    public static let maximumLayerSize: Int64 = 1 << 42

    /// A layer of a pulled manifest this client does not read as a file: an archive (tar), to be unpacked.
    public struct ArchiveLayer: Sendable, Equatable {
        public var descriptor: OCIDescriptor
        public var gzip: Bool
        /// The path the layer names, when it names one.
        public var path: RepoFilePath?
        /// Whether the path comes from `org.cncf.model.filepath` (modctl, KitOps) rather than the OCI title alone
        /// (olot, which writes the files under `models/` in the tar, the modelcar layout).
        public var namedByFilePath: Bool
    }

    /// The files and archives a pulled manifest holds, every field checked: at most ``maximumLayers`` layers, each
    /// of a media type read here (ModelPack's raw and tar layers in either spelling, Docker Model Runner's and
    /// plain OCI layers), a path from `org.cncf.model.filepath` (or `org.cnai.model.filepath`, or the OCI title)
    /// that stays inside the model (no `..`, no absolute path, no control characters), each path once, no
    /// foreign URLs; and the Hub origin when the annotations name one (a valid repository id, a 40-hex commit).
    ///
    /// - Throws: `protocolViolation` naming the first layer or annotation refused.
    public static func read(_ manifest: OCIManifest, name: String) throws -> (
        artifact: ModelPackArtifact, archives: [ArchiveLayer]
    ) {
        func refuse(_ why: String) -> ModelDepotError {
            ModelDepotError(.protocolViolation, "\(name) cannot be pulled: \(why).")
        }
        guard manifest.schemaVersion == 2 else {
            throw refuse("its manifest has schemaVersion \(manifest.schemaVersion), not 2")
        }
        guard manifest.layers.count <= maximumLayers else {
            throw refuse(
                "its manifest lists \(manifest.layers.count) layers, more than the \(maximumLayers) a pull takes")
        }
        var files: [File] = []
        var archives: [ArchiveLayer] = []
        var seen: Set<String> = []
        for (index, layer) in manifest.layers.enumerated() {
            let annotations = layer.annotations ?? [:]
            let named =
                annotations[OCIMediaType.filePathAnnotation] ?? annotations[OCIMediaType.legacyFilePathAnnotation]
                ?? annotations[OCIMediaType.titleAnnotation]
            let label = named.map { "'\($0.prefix(200))'" } ?? "layer \(index) (\(layer.digest))"
            guard layer.urls?.isEmpty ?? true else {
                throw refuse("layer \(label) points elsewhere (foreign 'urls'), which a pull does not follow")
            }
            guard layer.size >= 0, layer.size <= maximumLayerSize else {
                throw refuse("layer \(label) claims \(layer.size) bytes")
            }
            guard let kind = OCIMediaType.layerKind(of: layer.mediaType) else {
                throw refuse(
                    "layer \(label) has media type '\(layer.mediaType.prefix(200))', which this client does not read")
            }
            var path: RepoFilePath?
            if let named {
                do {
                    path = try RepoFilePath(named)
                } catch {
                    throw refuse(
                        "layer \(index) names the path '\(named.prefix(200))', which would land outside the model folder or is not a file name"
                    )
                }
            }
            switch kind {
            case .raw:
                guard let path else {
                    throw refuse(
                        "layer \(index) (\(layer.digest)) is a file but names no path (org.cncf.model.filepath)")
                }
                guard seen.insert(path.value).inserted else { throw refuse("two layers name the path \(label)") }
                let blobID = annotations[OCIMediaType.hubBlobIDAnnotation].flatMap {
                    HubEncoding.isGitID($0) ? $0.lowercased() : nil
                }
                files.append(
                    File(
                        path: path, size: layer.size, digest: layer.digest, blobID: blobID,
                        lfs: annotations[OCIMediaType.hubLFSAnnotation] == "true" || blobID == nil,
                        mediaType: layer.mediaType))
            case .tar(let gzip):
                let byFilePath =
                    annotations[OCIMediaType.filePathAnnotation] ?? annotations[OCIMediaType.legacyFilePathAnnotation]
                archives.append(
                    ArchiveLayer(descriptor: layer, gzip: gzip, path: path, namedByFilePath: byFilePath != nil))
            }
        }
        var hub: HubOrigin?
        let annotations = manifest.annotations ?? [:]
        if let repoText = annotations[OCIMediaType.hubRepositoryAnnotation] {
            guard let repo = try? RepoID(repoText) else {
                throw refuse("its annotations name the Hub repository '\(repoText.prefix(200))', which is not one")
            }
            guard let commit = annotations[OCIMediaType.hubCommitAnnotation]?.lowercased(), HubEncoding.isGitID(commit)
            else {
                throw refuse("its annotations name \(repo) without a 40-hex commit")
            }
            let typeText = annotations[OCIMediaType.hubTypeAnnotation] ?? RepoType.model.rawValue
            guard let type = RepoType(rawValue: typeText) else {
                throw refuse("its annotations name the repository type '\(typeText.prefix(50))'")
            }
            // A branch or tag of one segment, as a tag spells it (a ref file `refs/<revision>`, never a folder).
            var revision = annotations[OCIMediaType.hubRevisionAnnotation]
            if let named = revision, HubEncoding.isGitID(named) || !OCIReference.isTag(named) || named.hasSuffix(".") {
                revision = nil
            }
            hub = HubOrigin(repo: repo, type: type, commit: commit, revision: revision)
        }
        try checkPaths(files.map(\.path), name: name)
        return (ModelPackArtifact(files: files, hub: hub), archives)
    }

    /// Refuses paths that cannot all be files of one folder: two that differ only in case (one file on a
    /// case-insensitive volume, as APFS is by default) or in Unicode normalization, and a path that is another's
    /// folder (`a` and `a/b`).
    ///
    /// - Throws: `protocolViolation` naming both paths.
    public static func checkPaths(_ paths: [RepoFilePath], name: String) throws {
        var folded: [String: RepoFilePath] = [:]
        for path in paths {
            let key = path.value.precomposedStringWithCanonicalMapping.lowercased()
            if let other = folded.updateValue(path, forKey: key) {
                throw ModelDepotError(
                    .protocolViolation,
                    "\(name) cannot be pulled: it names \(other) and \(path), one file where case is not told apart.")
            }
        }
        for path in paths {
            var folder = ""
            for component in path.components.dropLast() {
                folder += (folder.isEmpty ? "" : "/") + component
                if let file = folded[folder.precomposedStringWithCanonicalMapping.lowercased()] {
                    throw ModelDepotError(
                        .protocolViolation, "\(name) cannot be pulled: \(file) is a file and a folder of \(path).")
                }
            }
        }
    }
}
