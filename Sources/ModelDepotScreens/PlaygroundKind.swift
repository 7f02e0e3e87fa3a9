import Foundation
import ModelDepot
import ModelDepotInference

/// The three playgrounds, and which one a model is used in: where "Use" takes a person.
public enum PlaygroundKind: String, Sendable, Hashable, CaseIterable, Codable {
    case chat, embeddings, transcribe

    /// The playground `entry` is used in here (text generation first: a chat model that also embeds opens Chat);
    /// nil when none can use it through a runtime here.
    public static func of(_ entry: CatalogEntry) -> PlaygroundKind? {
        allCases.first { $0.serves(entry) }
    }

    /// Whether this playground can use `entry` through the runtime that serves it here: chat through llama.cpp's
    /// server, embeddings through it or the in-process encoder, transcription through faster-whisper-server.
    public func serves(_ entry: CatalogEntry) -> Bool {
        guard accepts(entry), case .success(let runtime) = RuntimeKind.serving(entry) else { return false }
        switch self {
        case .chat: return runtime == .llamaServer
        case .embeddings: return runtime == .llamaServer || runtime == .sentenceEncoder
        case .transcribe: return runtime == .whisperServer
        }
    }

    /// Whether this playground is for `entry`'s kind of model (by its capabilities alone).
    public func accepts(_ entry: CatalogEntry) -> Bool {
        switch self {
        case .chat: entry.capabilities.contains { [.textGeneration, .codeGeneration, .reasoning].contains($0) }
        case .embeddings: entry.has(.embeddings)
        case .transcribe: entry.has(.transcription)
        }
    }

    /// The page's path, `/chat`.
    public var path: String { "/" + rawValue }

    /// What "Use" opens for `name`: the page with the model selected, `/chat?model=NAME`.
    public func path(selecting name: String) -> String {
        let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-._~"))
        return path + "?model=" + (name.addingPercentEncoding(withAllowedCharacters: allowed) ?? name)
    }
}
