import ModelDepotInference

/// The "Loaded models" panel: what runs in a runtime now, loading, ready or failed with the reason, and where it
/// answers. Over ``ModelRuntimes``; no HTML, no SwiftUI.
public struct LoadedModelsScreen: Sendable, Equatable, Encodable {
    public struct Row: Sendable, Equatable, Encodable {
        public var name: String
        /// `llamaServer`, `sentenceEncoder`, `whisperServer`.
        public var runtime: String
        /// `loading`, `ready` or `failed`.
        public var state: String
        /// The local server's API root; nil for a model in this process or one not ready.
        public var endpoint: String?
        /// Why it failed (the runtime's last lines), when it did.
        public var message: String?
    }

    public var rows: [Row]
    /// Shown when nothing is loaded.
    public var emptyMessage: String?

    /// The panel now.
    public static func load(_ runtimes: ModelRuntimes) async -> LoadedModelsScreen {
        let rows = await runtimes.loaded.map { loaded -> Row in
            switch loaded.state {
            case .loading:
                Row(name: loaded.name, runtime: loaded.kind.rawValue, state: "loading")
            case .ready(let endpoint):
                Row(
                    name: loaded.name, runtime: loaded.kind.rawValue, state: "ready", endpoint: endpoint?.absoluteString
                )
            case .failed(let reason):
                Row(name: loaded.name, runtime: loaded.kind.rawValue, state: "failed", message: reason)
            }
        }
        return LoadedModelsScreen(
            rows: rows, emptyMessage: rows.isEmpty ? "No model is loaded. Load a downloaded model to use it." : nil)
    }
}
