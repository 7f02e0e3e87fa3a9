import Foundation
import ModelDepot
import ModelDepotTesting
import Testing

/// A proxy between client and Hub that compresses answers although the client asked for them as they are
/// (`Accept-Encoding: identity`), as some corporate proxies do: API answers are decoded (a pull once failed
/// with `DecodingError.dataCorrupted`), and a compressed file is refused, never written compressed.
@Suite struct ContentCodingTests {
    static let layout: [String: [UInt8]] = [
        "acme/tiny/config.json": Array(#"{"model_type": "demo"}"#.utf8),
        "acme/tiny/model.safetensors": SampleData.bytes(count: 1 << 20, seed: 9),
    ]

    @Test func gzippedAPIAnswersAreDecoded() async throws {
        try await MirrorFixture.with(Self.layout) { mirror in
            try await Self.withProxy(to: mirror.baseURL, mode: "json") { proxy in
                let folder = try TemporaryDirectory(prefix: "modeldepot-gzip")
                defer { folder.remove() }
                let snapshot = try await SnapshotDownloader(
                    hub: HubClient(endpoint: proxy), cache: HubCache(root: folder.path("cache"))
                ).download(SnapshotRequest(repo: try RepoID("acme/tiny")))
                let weights = try Data(contentsOf: snapshot.folder.appendingPathComponent("model.safetensors"))
                #expect(weights == Data(Self.layout["acme/tiny/model.safetensors"]!))
            }
        }
    }

    @Test func aCompressedFileIsRefusedAndNothingIsWritten() async throws {
        try await MirrorFixture.with(Self.layout) { mirror in
            try await Self.withProxy(to: mirror.baseURL, mode: "all") { proxy in
                let folder = try TemporaryDirectory(prefix: "modeldepot-gzip")
                defer { folder.remove() }
                let cache = HubCache(root: folder.path("cache"))
                let error = await #expect(throws: ModelDepotError.self) {
                    try await SnapshotDownloader(hub: HubClient(endpoint: proxy), cache: cache)
                        .download(SnapshotRequest(repo: try RepoID("acme/tiny")))
                }
                #expect(error?.code == .protocolViolation)
                #expect(error?.message.contains("Content-Encoding 'gzip'") == true, "\(error?.message ?? "")")
                let blobs = cache.repository(try RepoID("acme/tiny"), type: .model).blobsFolder
                let written = (try? FileManager.default.contentsOfDirectory(atPath: blobs.path)) ?? []
                #expect(written.filter { !$0.hasSuffix(".incomplete") }.isEmpty, "\(written)")
            }
        }
    }

    /// Runs `body` with `Tests/PythonPeers/gzip_proxy.py` in front of `upstream`.
    static func withProxy(to upstream: URL, mode: String, _ body: (URL) async throws -> Void) async throws {
        let python = PythonInteropTests.python
        try #require(FileManager.default.isExecutableFile(atPath: python.path), "the venv is missing (scripts/test)")
        let script = PythonInteropTests.packageRoot.appendingPathComponent("Tests/PythonPeers/gzip_proxy.py")
        let folder = try TemporaryDirectory(prefix: "modeldepot-gzip-proxy")
        defer { folder.remove() }
        try await PeerProcess.with(
            python, [script.path, upstream.absoluteString, mode], in: folder.url, log: folder.path("proxy.log")
        ) { proxy in
            let line = await proxy.firstLine()
            let port = try #require(line.flatMap { Int($0) }, "the proxy did not start: \(proxy.output)")
            try await body(URL(string: "http://127.0.0.1:\(port)")!)
        }
    }
}
