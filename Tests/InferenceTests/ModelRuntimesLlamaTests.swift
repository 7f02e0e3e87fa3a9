import Foundation
import ModelDepot
import ModelDepotInference
import ModelDepotPlatform
import ModelDepotTesting
import Testing

/// The runtime manager with the real llama.cpp server and a model ModelDepot pulled: two loads at once start one
/// server, which answers; Unload ends it (its port closes); the memory estimate reads the GGUF's header.
@Suite struct ModelRuntimesLlamaTests {
    @Test(.timeLimit(.minutes(3))) func oneServerForTwoLoadsAndUnloadClosesItsPort() async throws {
        // Required, not skipped: the test setup installs llama.cpp's server (llama-cpp-python) in ./.venv.
        try #require(LlamaPeer.isInstalled, "llama-cpp-python is not in ./.venv (scripts/test installs it)")
        let folder = try TemporaryDirectory(prefix: "modeldepot-runtimes-llama")
        defer { folder.remove() }
        let (manager, catalog) = try await LlamaPeer.pulledModel(into: folder)
        var launcher = LocalRuntimeLauncher(catalog: catalog, cache: manager.cache)
        launcher.chatRuntime = LlamaPeer.runtime
        let runtimes = ModelRuntimes(launcher: launcher)
        let fit = try #require(await runtimes.memoryFit(LlamaPeer.entry))
        #expect(fit.weightBytes > 0 && fit.availableBytes != nil, "\(fit)")

        async let first = runtimes.load(LlamaPeer.entry)
        async let second = runtimes.load(LlamaPeer.entry)
        let (a, b) = try await (first, second)
        let endpoint = try #require(a.endpoint)
        #expect(b.endpoint == endpoint)
        let models = try await AsyncHTTPTransport.patient.send(
            TransportRequest(url: endpoint.appendingPathComponent("models")))
        for try await _ in models.body {}
        #expect(models.status == 200)
        #expect(await runtimes.loaded.map(\.state) == [.ready(endpoint: endpoint)])

        await runtimes.unload(LlamaPeer.entry.name)
        #expect(!a.isRunning)
        #expect(LoopbackConnection.refuses(port: try #require(endpoint.port)), "the server's port is still open")
        #expect(await runtimes.loaded.isEmpty)
    }
}
