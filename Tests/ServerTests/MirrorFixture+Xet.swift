import Foundation
import Logging
import ModelDepotServer
import ModelDepotTesting
import Testing

extension MirrorFixture {
    /// A mirror of the folder `root` that speaks Xet (`serve --xet`, with `--xet-uploads` when `acceptsUploads`),
    /// its state under `root/.state`.
    static func xetMirror(
        _ root: TemporaryDirectory, acceptsUploads: Bool = false, uploadLimit: Int64 = 16 << 30
    ) -> MirrorServer {
        var server = MirrorServer(
            roots: [root.url], caches: [], stateFolder: root.path(".state"),
            logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
        server.enableXet(folder: root.path(".state/xet"), acceptsUploads: acceptsUploads, uploadLimit: uploadLimit)
        return server
    }

    /// Asks for `name` of `repository` until its resolve carries `X-Xet-Hash`: the first ask starts its index, which
    /// builds in the background.
    func waitForXetIndex(_ repository: String, _ name: String, timeout: Duration = .seconds(120)) async throws {
        let indexed = await waitUntil(timeout: timeout) {
            (try? await get("/\(repository)/resolve/main/\(name)", method: "HEAD"))?.header("X-Xet-Hash") != nil
        }
        try #require(indexed, "\(name) was not indexed")
    }
}
