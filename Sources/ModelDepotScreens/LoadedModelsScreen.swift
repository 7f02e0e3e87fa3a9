import Foundation
import ModelDepot
import ModelDepotInference

/// The "Loaded models" panel: what runs in a runtime now, loading, ready or failed with the reason, its memory and
/// where it answers. Over ``ModelRuntimes``; no HTML, no SwiftUI.
public struct LoadedModelsScreen: Sendable, Equatable, Encodable {
    public struct Row: Sendable, Equatable, Encodable {
        public var name: String
        /// `llamaServer`, `sentenceEncoder`, `whisperServer`.
        public var runtime: String
        /// "llama.cpp server", "in this process", "faster-whisper server".
        public var runtimeText: String
        /// `loading`, `ready` or `failed`.
        public var state: String
        /// The local server's API root; nil for a model in this process or one not ready.
        public var endpoint: String?
        /// "port 41234", or "in this process".
        public var whereText: String
        /// "812 MB in RAM; estimated 1.1 GB" — what its process holds now and the estimate it was loaded with.
        public var memoryText: String
        /// Why it failed (the runtime's last lines), when it did.
        public var message: String?
        /// The playground "Use" opens for it (`/chat?model=…`); nil when none fits.
        public var usePath: String?
    }

    public var rows: [Row]
    /// Shown when nothing is loaded.
    public var emptyMessage: String?

    /// The panel now; `catalog` gives each model's playground.
    public static func load(_ runtimes: ModelRuntimes, catalog: ModelCatalog? = nil) async -> LoadedModelsScreen {
        let rows = await runtimes.loaded.map { loaded -> Row in
            var memory: [String] = []
            if let resident = loaded.residentBytes { memory.append("\(ByteFormat.string(resident)) in RAM") }
            if let estimate = loaded.memory?.neededBytes { memory.append("estimated \(ByteFormat.string(estimate))") }
            var row = Row(
                name: loaded.name, runtime: loaded.kind.rawValue, runtimeText: runtimeText(loaded.kind),
                state: "loading", whereText: loaded.kind == .sentenceEncoder ? "in this process" : "",
                memoryText: memory.joined(separator: "; "))
            row.usePath = catalog?.entry(named: loaded.name).flatMap(PlaygroundKind.of)?.path(selecting: loaded.name)
            switch loaded.state {
            case .loading:
                break
            case .ready(let endpoint):
                row.state = "ready"
                row.endpoint = endpoint?.absoluteString
                if let port = endpoint?.port { row.whereText = "port \(port)" }
            case .failed(let reason):
                row.state = "failed"
                row.message = reason
            }
            return row
        }
        return LoadedModelsScreen(
            rows: rows, emptyMessage: rows.isEmpty ? "No model is loaded. Use a downloaded model to load it." : nil)
    }

    static func runtimeText(_ kind: RuntimeKind) -> String {
        switch kind {
        case .llamaServer: "llama.cpp server"
        case .sentenceEncoder: "ModelDepot's encoder"
        case .whisperServer: "faster-whisper server"
        }
    }
}
