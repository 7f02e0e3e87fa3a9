import Foundation
import Logging
import ModelDepotServer
import Testing

/// Our mirror serving the repositories in a folder (`root/<org>/<name>/…`) on a free port of 127.0.0.1.
enum FolderMirror {
    /// Starts it; cancel the returned task when done (`defer { serving.cancel() }`).
    static func start(root: URL) async throws -> (endpoint: URL, serving: Task<Void, any Error>) {
        let mirror = MirrorServer(
            root: root, logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
        let (addresses, announce) = AsyncStream<URL>.makeStream()
        let serving = Task { try await mirror.run(host: "127.0.0.1", port: 0) { url in announce.yield(url) } }
        guard let endpoint = await addresses.first(where: { _ in true }) else {
            serving.cancel()
            throw CancellationError()
        }
        return (endpoint, serving)
    }
}
