import Foundation
import ModelDepotCore
import ModelDepotHub
import ModelDepotTrust

/// File formats a catalog entry can be in.
public enum ModelFormat: String, Sendable, Hashable, Codable, CaseIterable {
    case gguf, safetensors, mlx, coreml, pytorch, onnx
    /// CTranslate2's converted models (faster-whisper): `model.bin` is CTranslate2's own format, not a pickle.
    case ctranslate2
}

/// What a model is for.
public enum ModelCapability: String, Sendable, Hashable, Codable, CaseIterable {
    case textGeneration, embeddings, transcription, codeGeneration, reasoning, multimodal, multilingual
}

/// One known model variant: which repository, which of its files (one quantization, not the whole repo),
/// which of those must be present for it to load, and what it is.
public struct CatalogEntry: Sendable, Hashable, Codable {
    /// A short, stable name: lowercase letters, digits, `.`, `-` (`qwen2.5-0.5b-instruct-q4`).
    public var name: String
    /// The Hub repository holding the model.
    public var repo: RepoID
    /// Whether it is a model, dataset or space repository (almost always a model).
    public var repoType: RepoType
    /// A pinned commit or tag when known; the default branch otherwise.
    public var revision: String?
    /// Patterns (Python's allow-pattern semantics) selecting the variant's files.
    public var files: [String]
    /// Paths that must be present for the model to load: files, or folders (a Core ML `.mlmodelc`).
    public var required: [String]
    /// The file format the model ships in.
    public var format: ModelFormat
    /// What the model can do.
    public var capabilities: [ModelCapability]
    /// Parameter count.
    public var parameters: Int64?
    /// The quantization of the weights (`Q4_K_M`, `F16`…), when the variant has one.
    public var quantization: String?
    /// Context window in tokens.
    public var contextLength: Int?
    /// The length of the vectors an embedding model returns.
    public var embeddingDimensions: Int?
    /// Approximate download size of the variant's files, in bytes.
    public var sizeBytes: Int64
    /// The model's license identifier (`apache-2.0`, `mit`…), as its repository states it.
    public var license: String?
    /// Whether the catalog suggests this entry first for its capability.
    public var recommended: Bool
    public var description: String

    enum CodingKeys: String, CodingKey {
        case name, repo, repoType, revision, files, required, format, capabilities, parameters, quantization
        case contextLength, embeddingDimensions, sizeBytes, license, recommended, description
    }

    /// An entry, for catalogs an app builds in code rather than loads from JSON.
    public init(
        name: String, repo: RepoID, repoType: RepoType = .model, revision: String? = nil, files: [String],
        required: [String], format: ModelFormat, capabilities: [ModelCapability], parameters: Int64? = nil,
        quantization: String? = nil, contextLength: Int? = nil, embeddingDimensions: Int? = nil, sizeBytes: Int64,
        license: String? = nil, recommended: Bool = false, description: String
    ) {
        self.name = name
        self.repo = repo
        self.repoType = repoType
        self.revision = revision
        self.files = files
        self.required = required
        self.format = format
        self.capabilities = capabilities
        self.parameters = parameters
        self.quantization = quantization
        self.contextLength = contextLength
        self.embeddingDimensions = embeddingDimensions
        self.sizeBytes = sizeBytes
        self.license = license
        self.recommended = recommended
        self.description = description
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        repo = try container.decode(RepoID.self, forKey: .repo)
        repoType = try container.decodeIfPresent(RepoType.self, forKey: .repoType) ?? .model
        revision = try container.decodeIfPresent(String.self, forKey: .revision)
        files = try container.decode([String].self, forKey: .files)
        required = try container.decodeIfPresent([String].self, forKey: .required) ?? []
        format = try container.decode(ModelFormat.self, forKey: .format)
        capabilities = try container.decode([ModelCapability].self, forKey: .capabilities)
        parameters = try container.decodeIfPresent(Int64.self, forKey: .parameters)
        quantization = try container.decodeIfPresent(String.self, forKey: .quantization)
        contextLength = try container.decodeIfPresent(Int.self, forKey: .contextLength)
        embeddingDimensions = try container.decodeIfPresent(Int.self, forKey: .embeddingDimensions)
        sizeBytes = try container.decode(Int64.self, forKey: .sizeBytes)
        license = try container.decodeIfPresent(String.self, forKey: .license)
        recommended = try container.decodeIfPresent(Bool.self, forKey: .recommended) ?? false
        description = try container.decodeIfPresent(String.self, forKey: .description) ?? ""
    }

    /// The pull that fetches exactly this variant.
    public var snapshotRequest: SnapshotRequest {
        SnapshotRequest(repo: repo, type: repoType, revision: revision ?? "main", include: files)
    }

    /// Whether the model has `capability`.
    public func has(_ capability: ModelCapability) -> Bool { capabilities.contains(capability) }
}
