import Foundation
import ModelDepot

/// Which program serves a model here, decided from its catalog entry alone.
public enum RuntimeKind: String, Sendable, Hashable, Codable {
    /// llama.cpp's OpenAI-compatible server, for GGUF text generation and embeddings.
    case llamaServer
    /// The in-process BERT-family sentence encoder (`ModelDepotEmbeddings`), for safetensors embedding models.
    case sentenceEncoder
    /// faster-whisper-server, for CTranslate2 Whisper models.
    case whisperServer

    /// The runtime for `entry`, or why none here can serve it (a reason a person can act on).
    public static func serving(_ entry: CatalogEntry) -> Result<RuntimeKind, RuntimeUnavailable> {
        let capabilities = Set(entry.capabilities)
        switch entry.format {
        case .gguf where capabilities.contains(.embeddings) || !capabilities.isDisjoint(with: textKinds):
            return .success(.llamaServer)
        case .gguf:
            return .failure(
                .init("llama.cpp's server runs GGUF models for text and embeddings, not \(entry.name)'s kind"))
        case .safetensors where capabilities.contains(.embeddings):
            return .success(.sentenceEncoder)
        case .ctranslate2 where capabilities.contains(.transcription):
            return .success(.whisperServer)
        case .coreml:
            return .failure(.init("Core ML models run in apps on Apple devices"))
        case .mlx:
            return .failure(.init("MLX models run on Apple silicon Macs, with MLX"))
        case .pytorch, .onnx:
            return .failure(
                .init("no runtime here runs \(entry.format.rawValue) files; pick a GGUF build of this model"))
        default:
            return .failure(.init("no runtime here serves \(entry.format.rawValue) models for \(entry.name)'s kind"))
        }
    }

    static let textKinds: Set<ModelCapability> = [.textGeneration, .codeGeneration, .reasoning]
}

/// Why no runtime here can serve a model.
public struct RuntimeUnavailable: Error, Sendable, Equatable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
