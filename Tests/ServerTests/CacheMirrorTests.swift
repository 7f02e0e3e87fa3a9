import Foundation
import Logging
import ModelDepot
import ModelDepotServer
import ModelDepotTesting
import Testing

/// Serving a Hub cache laid out exactly as Python's huggingface_hub writes it.
@Suite struct CacheMirrorTests {
    static let weights = SampleData.bytes(count: 2 << 20, seed: 61)
    static let config = Array(#"{"a": 1}"#.utf8)
    static let commit = "0123456789abcdef0123456789abcdef01234567"

    /// `models--acme--cached` with an LFS blob, a git blob, a nested file, refs `main` and `v1.0`.
    static func makeCache() throws -> TemporaryDirectory {
        let cache = try TemporaryDirectory(prefix: "modeldepot-hubcache")
        let repo = cache.path("models--acme--cached")
        let blobs = repo.appendingPathComponent("blobs")
        let snapshot = repo.appendingPathComponent("snapshots/\(commit)")
        try FileManager.default.createDirectory(at: blobs, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(
            at: snapshot.appendingPathComponent("sub"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(
            at: repo.appendingPathComponent("refs"), withIntermediateDirectories: true)
        let weightsBlob = SampleData.sha256(weights)
        let configBlob = GitBlob.id(of: config)
        try Data(weights).write(to: blobs.appendingPathComponent(weightsBlob))
        try Data(config).write(to: blobs.appendingPathComponent(configBlob))
        try FileManager.default.createSymbolicLink(
            atPath: snapshot.appendingPathComponent("model.gguf").path,
            withDestinationPath: "../../blobs/\(weightsBlob)")
        try FileManager.default.createSymbolicLink(
            atPath: snapshot.appendingPathComponent("sub/config.json").path,
            withDestinationPath: "../../../blobs/\(configBlob)")
        try FileManager.default.createSymbolicLink(
            atPath: snapshot.appendingPathComponent("escape").path, withDestinationPath: "/etc/hostname")
        try Data(commit.utf8).write(to: repo.appendingPathComponent("refs/main"))
        try Data(commit.utf8).write(to: repo.appendingPathComponent("refs/v1.0"))
        return cache
    }

    @Test func aCacheIsServedWithItsCommitRefsAndETags() async throws {
        let cache = try Self.makeCache()
        defer { cache.remove() }
        let server = MirrorServer(
            roots: [], caches: [cache.url], stateFolder: cache.path(".state"),
            logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
        try await MirrorFixture.serving(server, root: cache) { mirror in
            let info = try #require(try await mirror.get("/api/models/acme/cached").json as? [String: Any])
            #expect(info["sha"] as? String == Self.commit)
            #expect(
                (info["siblings"] as? [[String: Any]])?.compactMap { $0["rfilename"] as? String } == [
                    "model.gguf", "sub/config.json",
                ],
                "a link out of the repository is not served")
            let tagged = try #require(
                try await mirror.get("/api/models/acme/cached/revision/v1.0").json as? [String: Any])
            #expect(tagged["sha"] as? String == Self.commit)
            let refs = try #require(try await mirror.get("/api/models/acme/cached/refs").json as? [String: Any])
            #expect(
                Set((refs["branches"] as? [[String: Any]])?.compactMap { $0["name"] as? String } ?? []) == [
                    "main", "v1.0",
                ])
            let gguf = try await mirror.get("/acme/cached/resolve/v1.0/model.gguf")
            #expect(gguf.body == Self.weights)
            #expect(gguf.header("ETag") == "\"\(SampleData.sha256(Self.weights))\"")
            let config = try await mirror.get("/acme/cached/resolve/\(Self.commit)/sub/config.json", method: "HEAD")
            #expect(config.header("ETag") == "\"\(GitBlob.id(of: Self.config))\"")
            let missing = try await mirror.get("/acme/cached/resolve/v2/model.gguf", method: "HEAD")
            #expect(missing.header("X-Error-Code") == "RevisionNotFound")
            let models = try #require(try await mirror.get("/api/models").json as? [[String: Any]])
            #expect(models.compactMap { $0["id"] as? String } == ["acme/cached"])
        }
    }

    @Test func hubEnvironmentResolvesTheCacheAsPythonDoes() {
        #expect(HubEnvironment(variables: ["HF_HUB_CACHE": "/c"]).cacheDirectory.path == "/c")
        #expect(HubEnvironment(variables: ["HUGGINGFACE_HUB_CACHE": "/legacy"]).cacheDirectory.path == "/legacy")
        #expect(HubEnvironment(variables: ["HF_HOME": "/h"]).cacheDirectory.path == "/h/hub")
        #expect(HubEnvironment(variables: ["XDG_CACHE_HOME": "/x"]).cacheDirectory.path == "/x/huggingface/hub")
        #expect(HubEnvironment(variables: ["HOME": "/home/u"]).cacheDirectory.path == "/home/u/.cache/huggingface/hub")
        #expect(
            HubEnvironment(variables: ["HF_HOME": "~/hf", "HOME": "/home/u"]).cacheDirectory.path == "/home/u/hf/hub")
        #expect(HubEnvironment(variables: ["HF_HUB_CACHE": "$BASE/hub", "BASE": "/b"]).cacheDirectory.path == "/b/hub")
        #expect(HubEnvironment(variables: ["HF_ENDPOINT": "http://m:1//"]).endpoint == "http://m:1")
        #expect(HubEnvironment(variables: [:]).endpoint == "https://huggingface.co")
    }
}
