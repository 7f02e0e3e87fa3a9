import Foundation
import Logging
import ModelDepot
import ModelDepotServer
import ModelDepotTesting
import Testing

/// The mirror speaking Xet (`serve --xet`) to the client most of the world uses, huggingface_hub 2.4 with hf_xet
/// 1.8: every `X-Xet-Hash` equals hf_xet's own hash of the bytes, and hf_hub_download fetches files the mirror
/// chunked itself through Xet — reconstructions, xorb ranges — byte-exact: one small, one over 64 MiB (two xorbs),
/// one empty (plain HTTP). The first request for a file is answered at once without Xet while its index builds.
@Suite struct MirrorXetTests {
    @Test func huggingfaceHubDownloadsThroughXetByteExact() async throws {
        let files: [String: [UInt8]] = [
            "acme/xet/small.bin": SampleData.bytes(count: 300_000, seed: 71),
            "acme/xet/weights.bin": SampleData.bytes(count: 70 << 20, seed: 72),
            "acme/xet/empty.txt": [],
        ]
        let root = try TemporaryDirectory(prefix: "modeldepot-xet-mirror")
        defer { root.remove() }
        try root.write(files)
        var server = MirrorServer(
            roots: [root.url], caches: [], stateFolder: root.path(".state"),
            logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
        server.enableXet(folder: root.path(".state/xet"))
        try await MirrorFixture.serving(server, root: root) { mirror in
            // The first ask starts the index and is answered without Xet; once built, resolves carry it.
            for name in ["small.bin", "weights.bin"] {
                let first = try await mirror.get("/acme/xet/resolve/main/\(name)", method: "HEAD")
                #expect(first.status == 200)
                let indexed = await waitUntil(timeout: .seconds(300)) {
                    (try? await mirror.get("/acme/xet/resolve/main/\(name)", method: "HEAD"))?.header("X-Xet-Hash")
                        != nil
                }
                try #require(indexed, "\(name) was not indexed")
            }
            let empty = try await mirror.get("/acme/xet/resolve/main/empty.txt", method: "HEAD")
            #expect(empty.header("X-Xet-Hash") == nil, "an empty file goes by plain HTTP")
            // Without a read token the CAS answers nothing.
            let headers = try await mirror.get("/acme/xet/resolve/main/small.bin", method: "HEAD")
            let hash = try #require(headers.header("X-Xet-Hash"))
            #expect(try await mirror.get("/xet/v1/reconstructions/\(hash)").status == 401)
            #expect(headers.header("Link")?.contains("rel=\"xet-auth\"") == true)

            let names = ["small.bin", "weights.bin", "empty.txt"]
            let answer = try await PythonInteropTests.runPython(
                script: "xet_client.py",
                ["acme/xet", root.path("client-cache").path, root.path("acme/xet").path] + names,
                endpoint: mirror.baseURL, home: root.path("home"))
            let downloaded = try #require(answer["files"] as? [String: [String: Any]], "\(answer)")
            for name in names {
                let result = try #require(downloaded[name], "\(name): \(answer)")
                let bytes = try #require(files["acme/xet/\(name)"])
                let sha256 = SampleData.sha256(bytes)
                #expect(result["sha256"] as? String == sha256, "\(name) arrived byte-exact")
                #expect(result["xet"] as? Bool == (name != "empty.txt"), "\(name) went through Xet: \(result)")
                if name != "empty.txt" {
                    let served = try await mirror.get("/acme/xet/resolve/main/\(name)", method: "HEAD")
                    #expect(served.header("X-Xet-Hash") == result["hash"] as? String, "\(name): hf_xet's own hash")
                }
            }
        }
    }
}
