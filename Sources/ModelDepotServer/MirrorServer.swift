import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import ModelDepot
import NIOCore

/// A Hub-compatible mirror: any Hub client (ours, Python's `huggingface_hub` with `HF_ENDPOINT`) can list and
/// pull the repositories it serves.
///
/// ```swift
/// let server = MirrorServer(root: URL(fileURLWithPath: "/srv/models"))
/// try await server.run(host: "127.0.0.1", port: 8080) { url in print("listening on \(url)") }
/// ```
public struct MirrorServer: Sendable {
    let source: any RepositorySource
    let logger: Logger

    /// Serves every `root/<org>/<name>/` folder as a model repository.
    ///
    /// - Parameters:
    ///   - stateFolder: where the hash index is kept (default `root/.modeldepot`, which is never served).
    public init(root: URL, stateFolder: URL? = nil, logger: Logger = Logger(label: "modeldepot.server")) {
        let state = stateFolder ?? root.appendingPathComponent(".modeldepot")
        source = FolderRepositorySource(
            root: root, index: HashIndex(storePath: state.appendingPathComponent("hash-index.json").path))
        self.logger = logger
    }

    /// Runs until the task is cancelled or the process gets SIGINT/SIGTERM.
    ///
    /// - Parameter onListening: called once with the base URL (the real port when `port` is 0).
    public func run(
        host: String = "127.0.0.1", port: Int = 8080, onListening: @escaping @Sendable (URL) async -> Void = { _ in }
    )
        async throws
    {
        let responder = MirrorResponder(source: source, logger: logger)
        let app = Application(
            responder: responder,
            configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: "modeldepot"),
            onServerRunning: { channel in
                let boundPort = channel.localAddress?.port ?? port
                await onListening(URL(string: "http://\(host):\(boundPort)")!)
            },
            logger: logger
        )
        try await app.runService()
    }
}
