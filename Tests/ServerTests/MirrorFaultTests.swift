import Foundation
import Logging
import ModelDepot
import ModelDepotServer
import ModelDepotTesting
import Testing

/// `serve --faults`: the mirror misbehaves on purpose, and our client recovers from each fault it injects.
@Suite struct MirrorFaultTests {
    static let weights = SampleData.bytes(count: 3 << 20, seed: 77)

    @Test func specsAreParsedOrRefusedWithTheReason() throws {
        let faults = try ServedFaults("reset=0.05, status503=2x,stall=0,rate=4MB")
        #expect(faults.frequencies[.reset] == .probability(0.05))
        #expect(faults.frequencies[.status503] == .firstRequests(2))
        #expect(faults.frequencies[.stall] == .probability(0))
        #expect(faults.bytesPerSecond == 4 << 20)
        #expect(faults.description == "status503=2x,reset=0.05,stall=0.0,rate=4194304B/s")
        #expect(try ServedFaults("rate=512k").bytesPerSecond == 512 << 10)
        for (spec, reason) in [
            ("reset", "expected name=value"), ("explode=0.1", "the faults are status503, reset, stall and rate"),
            ("reset=2", "a probability between 0 and 1"), ("rate=fast", "bytes per second"),
        ] {
            #expect(throws: ServedFaultsError.self) { try ServedFaults(spec) }
            do {
                _ = try ServedFaults(spec)
            } catch let error as ServedFaultsError {
                #expect(error.message.contains(reason), "\(spec): \(error.message)")
            }
        }
    }

    @Test func aPullRecoversFromEveryInjectedFault() async throws {
        let root = try TemporaryDirectory(prefix: "modeldepot-faults")
        defer { root.remove() }
        try FileManager.default.createDirectory(at: root.path("acme/tiny"), withIntermediateDirectories: true)
        try Data(Self.weights).write(to: root.path("acme/tiny/model.safetensors"))
        try Data("{}".utf8).write(to: root.path("acme/tiny/config.json"))
        var server = MirrorServer(
            root: root.url, logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
        let faults = try ServedFaults("status503=1x,reset=2x")
        server.faults = faults
        try await MirrorFixture.serving(server, root: root) { mirror in
            let cache = try TemporaryDirectory(prefix: "modeldepot-faults-cache")
            defer { cache.remove() }
            var configuration = DownloadConfiguration()
            configuration.segmentSize = 256 << 10
            configuration.stallTimeout = nil
            let pull = SnapshotDownloader(
                hub: HubClient(endpoint: mirror.baseURL, transport: DefaultTransport.shared, clock: ImmediateClock()),
                cache: HubCache(root: cache.url),
                downloader: Downloader(clock: ImmediateClock(), configuration: configuration), clock: ImmediateClock())
            let snapshot = try await pull.download(SnapshotRequest(repo: try RepoID("acme/tiny")))
            let file = snapshot.folder.appendingPathComponent("model.safetensors")
            #expect(try Data(contentsOf: file) == Data(Self.weights))
            #expect(faults.injected[.status503] == 1 && faults.injected[.reset] == 2)
        }
    }

    @Test func theMirrorServesLFSContentByItsSHA256AsACDNDoes() async throws {
        try await MirrorFixture.with(["acme/tiny/model.safetensors": Self.weights]) { mirror in
            let reply = try await mirror.get("/" + SampleData.sha256(Self.weights))
            #expect(reply.status == 200 && reply.body == Self.weights)
            #expect(try await mirror.get("/" + String(repeating: "0", count: 64)).status == 404)
        }
    }
}
