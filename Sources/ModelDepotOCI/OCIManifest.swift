import Foundation

/// What a descriptor in a manifest says of one blob: its media type, digest and size, and annotations.
public struct OCIDescriptor: Sendable, Hashable, Codable {
    public var mediaType: String
    public var digest: OCIDigest
    public var size: Int64
    public var annotations: [String: String]?
    public var artifactType: String?
    /// Where else the blob may be fetched from (foreign layers); a pull here never follows them.
    public var urls: [String]?

    public init(
        mediaType: String, digest: OCIDigest, size: Int64, annotations: [String: String]? = nil,
        artifactType: String? = nil
    ) {
        self.mediaType = mediaType
        self.digest = digest
        self.size = size
        self.annotations = annotations
        self.artifactType = artifactType
    }
}

/// An OCI image manifest (`application/vnd.oci.image.manifest.v1+json`), or Docker's v2 schema 2, which has the same
/// shape: a config blob and layers, each a descriptor.
public struct OCIManifest: Sendable, Hashable, Codable {
    public var schemaVersion: Int
    public var mediaType: String?
    public var artifactType: String?
    public var config: OCIDescriptor
    public var layers: [OCIDescriptor]
    public var annotations: [String: String]?

    public init(
        mediaType: String = OCIMediaType.imageManifest, artifactType: String?, config: OCIDescriptor,
        layers: [OCIDescriptor], annotations: [String: String]?
    ) {
        schemaVersion = 2
        self.mediaType = mediaType
        self.artifactType = artifactType
        self.config = config
        self.layers = layers
        self.annotations = annotations
    }

    /// The manifest as bytes to push: keys sorted, so the same model always gives the same digest.
    public func encoded() throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(self))
    }
}

/// An OCI image index: a list of manifests (one per platform, for images).
public struct OCIIndex: Sendable, Codable {
    public var schemaVersion: Int
    public var mediaType: String?
    public var manifests: [OCIDescriptor]
}

/// The media types and annotation keys of OCI and the CNCF ModelPack specification (`modelpack/model-spec`) that
/// pushes write and pulls read; each written once, here.
public enum OCIMediaType {
    public static let imageManifest = "application/vnd.oci.image.manifest.v1+json"
    public static let imageIndex = "application/vnd.oci.image.index.v1+json"
    public static let dockerManifest = "application/vnd.docker.distribution.manifest.v2+json"
    public static let dockerManifestList = "application/vnd.docker.distribution.manifest.list.v2+json"
    /// What a manifest request accepts, in order.
    public static let acceptedManifests = [imageManifest, dockerManifest, imageIndex, dockerManifestList]

    /// ModelPack's artifact type, and its config blob's media type.
    public static let modelManifest = "application/vnd.cncf.model.manifest.v1+json"
    public static let modelConfig = "application/vnd.cncf.model.config.v1+json"
    /// ModelPack's raw (unarchived, uncompressed) layers, one file each.
    public static let weightRaw = "application/vnd.cncf.model.weight.v1.raw"
    public static let weightConfigRaw = "application/vnd.cncf.model.weight.config.v1.raw"
    public static let docRaw = "application/vnd.cncf.model.doc.v1.raw"
    public static let codeRaw = "application/vnd.cncf.model.code.v1.raw"
    public static let datasetRaw = "application/vnd.cncf.model.dataset.v1.raw"

    /// The layer annotation that names a file's path in the model (ModelPack), and its earlier `cnai` spelling.
    public static let filePathAnnotation = "org.cncf.model.filepath"
    public static let legacyFilePathAnnotation = "org.cnai.model.filepath"
    /// The OCI title annotation, by which `oras` names the files it pulls.
    public static let titleAnnotation = "org.opencontainers.image.title"

    /// ModelDepot's own annotations: which Hub repository and commit an artifact is, and each file's blob names.
    public static let hubRepositoryAnnotation = "io.modeldepot.hub.repository"
    public static let hubTypeAnnotation = "io.modeldepot.hub.type"
    public static let hubCommitAnnotation = "io.modeldepot.hub.commit"
    public static let hubRevisionAnnotation = "io.modeldepot.hub.revision"
    /// A layer's git blob id as the Hub lists it (the cache names small files' blobs by it).
    public static let hubBlobIDAnnotation = "io.modeldepot.hub.blob-id"
    /// Set on a layer whose file the Hub stores with LFS (the cache names its blob by its SHA-256).
    public static let hubLFSAnnotation = "io.modeldepot.hub.lfs"
    /// A layer's file SHA-256, hex (the raw layer's digest says the same; tools that rewrite layers keep it).
    public static let fileSHA256Annotation = "io.modeldepot.file.sha256"

    /// The ModelPack raw layer type for a file of a model at `path`: weights by their formats' extensions,
    /// documentation (README, LICENSE, Markdown), code (Python), and configuration for the rest (config,
    /// tokenizer, generation settings, signatures).
    public static func rawLayerType(forPath path: String) -> String {
        let name = (path as NSString).lastPathComponent.lowercased()
        let ext = (name as NSString).pathExtension
        if weightExtensions.contains(ext) { return weightRaw }
        if ext == "md" || name.hasPrefix("readme") || name.hasPrefix("license") || name.hasPrefix("notice") {
            return docRaw
        }
        if ext == "py" { return codeRaw }
        return weightConfigRaw
    }

    static let weightExtensions: Set<String> = [
        "safetensors", "gguf", "bin", "pt", "pth", "ckpt", "onnx", "h5", "msgpack", "tflite", "pte", "npz", "npy",
        "mlmodel", "pb", "ot", "llamafile",
    ]

    /// How a pull reads a layer of `mediaType`: one file as it is, or an archive of files.
    public enum LayerKind: Sendable, Equatable {
        case raw
        case tar(gzip: Bool)
    }

    /// The kind of a layer a pull understands, or nil for a media type it does not (refused by name).
    public static func layerKind(of mediaType: String) -> LayerKind? {
        let type = mediaType.lowercased()
        for prefix in ["application/vnd.cncf.model.", "application/vnd.cnai.model."] where type.hasPrefix(prefix) {
            let rest = type.dropFirst(prefix.count)
            guard
                ["weight.v1", "weight.config.v1", "doc.v1", "code.v1", "dataset.v1"].contains(where: {
                    rest.hasPrefix($0)
                })
            else { return nil }
            if rest.hasSuffix(".raw") || rest.hasSuffix(".v1") { return .raw }
            if rest.hasSuffix(".tar") { return .tar(gzip: false) }
            if rest.hasSuffix(".tar+gzip") { return .tar(gzip: true) }
            return nil
        }
        // Docker Model Runner's GGUF and license layers, and plain octet streams (`oras push` of a file).
        if type.hasPrefix("application/vnd.docker.ai.") || type == "application/octet-stream" { return .raw }
        if type == "application/vnd.oci.image.layer.v1.tar" { return .tar(gzip: false) }
        if type == "application/vnd.oci.image.layer.v1.tar+gzip" { return .tar(gzip: true) }
        return nil
    }
}
