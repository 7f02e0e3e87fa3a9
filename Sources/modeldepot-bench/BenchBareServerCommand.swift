import ArgumentParser
import Foundation
import Hummingbird

/// The smallest Hummingbird 2 server: one route, a fixed body, no middleware and no log — the ceiling
/// `bench/load.sh` measures the mirror against, built with the same Hummingbird and SwiftNIO in the same release
/// build.
struct BenchBareServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bare-server", abstract: "Answer GET and HEAD /bare with a fixed 3-byte body until stopped.")

    @Option(help: "The port on 127.0.0.1 (0: any free port; the chosen one is printed).")
    var port = 0

    func run() async throws {
        let router = Router()
        router.get("/bare") { _, _ in "{}\n" }
        router.head("/bare") { _, _ in "{}\n" }
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)),
            onServerRunning: { channel in
                FileHandle.standardOutput.write(
                    Data("listening on http://127.0.0.1:\(channel.localAddress?.port ?? 0)\n".utf8))
            })
        try await app.runService()
    }
}
