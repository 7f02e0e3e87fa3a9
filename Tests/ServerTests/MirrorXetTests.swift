import Foundation
import ModelDepot
import ModelDepotServer
import ModelDepotTesting
import ModelDepotXet
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
            "acme/other/notes.bin": SampleData.bytes(count: 200_000, seed: 73),
        ]
        let root = try TemporaryDirectory(prefix: "modeldepot-xet-mirror")
        defer { root.remove() }
        try root.write(files)
        try await MirrorFixture.serving(MirrorFixture.xetMirror(root), root: root) { mirror in
            // The first ask starts the index and is answered without Xet; once built, resolves carry it.
            for name in ["small.bin", "weights.bin"] {
                let first = try await mirror.get("/acme/xet/resolve/main/\(name)", method: "HEAD")
                #expect(first.status == 200)
                try await mirror.waitForXetIndex("acme/xet", name, timeout: .seconds(300))
            }
            // Listings carry each indexed file's xetHash, as the Hub's do.
            let listing = try #require(try await mirror.get("/api/models/acme/xet/tree/main").json as? [[String: Any]])
            for entry in listing {
                let name = try #require(entry["path"] as? String)
                let resolved = try await mirror.get("/acme/xet/resolve/main/\(name)", method: "HEAD")
                #expect(entry["xetHash"] as? String == resolved.header("X-Xet-Hash"), "\(name)")
            }
            let empty = try await mirror.get("/acme/xet/resolve/main/empty.txt", method: "HEAD")
            #expect(empty.header("X-Xet-Hash") == nil, "an empty file goes by plain HTTP")
            // Without a read token the CAS answers nothing.
            let headers = try await mirror.get("/acme/xet/resolve/main/small.bin", method: "HEAD")
            let hash = try #require(headers.header("X-Xet-Hash"))
            #expect(try await mirror.get("/xet/v1/reconstructions/\(hash)").status == 401)
            #expect(headers.header("Link")?.contains("rel=\"xet-auth\"") == true)

            try await Self.checkTokensAndRanges(mirror, weights: try #require(files["acme/xet/weights.bin"]))

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

    /// A token reads only its repository; a xorb URL without a token reads nothing; a reconstruction of a range that
    /// starts mid-file, followed by HTTP Range requests on the xorbs, gives exactly those bytes.
    static func checkTokensAndRanges(_ mirror: MirrorFixture, weights: [UInt8]) async throws {
        func token(_ repository: String) async throws -> String {
            let reply = try await mirror.get("/api/models/\(repository)/xet-read-token/main")
            #expect(reply.header("X-Xet-Cas-Url")?.hasSuffix("/xet") == true)
            return try #require(reply.header("X-Xet-Access-Token"))
        }
        // acme/other's files are indexed too, so its token is a real one.
        _ = try await mirror.get("/acme/other/resolve/main/notes.bin", method: "HEAD")
        let own = try await token("acme/xet")
        let write = try await mirror.get("/api/models/acme/xet/xet-write-token/main")
        #expect(write.status == 403, "no write tokens without --xet-uploads")
        let foreign = try await token("acme/other")
        let resolved = try await mirror.get("/acme/xet/resolve/main/weights.bin", method: "HEAD")
        let hash = try #require(resolved.header("X-Xet-Hash"))
        let path = "/xet/v1/reconstructions/\(hash)"
        #expect(try await mirror.get(path, headers: [("Authorization", "Bearer \(foreign)")]).status == 404)
        #expect(try await mirror.get(path, headers: [("Authorization", "Bearer not-a-token")]).status == 401)
        let start = 40 << 20 - 12345
        let end = 66 << 20 + 777
        let plan = try await mirror.get(
            path, headers: [("Authorization", "Bearer \(own)"), ("Range", "bytes=\(start)-\(end)")])
        #expect(plan.status == 200)
        let json = try #require(plan.json as? [String: Any])
        let terms = try #require(json["terms"] as? [[String: Any]])
        let fetchInfo = try #require(json["fetch_info"] as? [String: [[String: Any]]])
        var chunksOf: [String: (start: Int, chunks: [[UInt8]])] = [:]
        for (xorb, fetches) in fetchInfo {
            for fetch in fetches {
                let urlText = try #require(fetch["url"] as? String)
                let url = try #require(URL(string: urlText))
                let urlRange = try #require(fetch["url_range"] as? [String: Int])
                let chunkRange = try #require(fetch["range"] as? [String: Int])
                let pathAndQuery = url.path + "?" + (url.query ?? "")
                let bare = try await mirror.get(url.path)
                #expect(bare.status == 403, "a xorb URL without its token reads nothing")
                let bytes = try await mirror.get(
                    pathAndQuery, headers: [("Range", "bytes=\(urlRange["start"]!)-\(urlRange["end"]!)")])
                #expect(bytes.status == 206)
                chunksOf[xorb] = (chunkRange["start"]!, try XorbChunks.read(bytes.body))
            }
        }
        var rebuilt: [UInt8] = []
        for term in terms {
            let xorb = try #require(term["hash"] as? String)
            let range = try #require(term["range"] as? [String: Int])
            let (first, chunks) = try #require(chunksOf[xorb])
            rebuilt += chunks[(range["start"]! - first)..<(range["end"]! - first)].flatMap { $0 }
        }
        let offset = try #require(json["offset_into_first_range"] as? Int)
        #expect(terms.count >= 2, "the range crosses from the first xorb into the second")
        #expect(Array(rebuilt.dropFirst(offset).prefix(end - start + 1)) == Array(weights[start...end]))
    }
}
