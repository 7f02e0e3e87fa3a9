import Foundation
import ModelDepot
import ModelDepotServer
import ModelDepotTesting
import ModelDepotXet
import Testing

/// The mirror's CAS taking uploads (`serve --xet --xet-uploads`) as the Hub's does: hf_xet 1.8 uploads files it
/// chunked, compressed (LZ4 frames, byte grouping) and deduplicated itself, then reads them back through Xet
/// byte-exact, from a mirror restarted in between; and uploads an attacker crafts are refused, leaving nothing kept.
@Suite struct MirrorXetUploadTests {
    static let python = PythonInteropTests.packageRoot.appendingPathComponent(".venv-xet/bin/python")

    static func token(_ mirror: MirrorFixture, _ kind: String, _ repository: String) async throws -> String {
        let reply = try await mirror.get("/api/models/\(repository)/xet-\(kind)-token/main")
        return try #require(reply.header("X-Xet-Access-Token"), "\(kind) token: \(reply.status)")
    }

    @Test func hfXetUploadsIntoTheMirrorAndReadsBackByteExact() async throws {
        let root = try TemporaryDirectory(prefix: "modeldepot-xet-upload")
        defer { root.remove() }
        try root.write(["acme/up/README.md": Array("uploads land here\n".utf8), "acme/other/README.md": [1]])
        let random = SampleData.bytes(count: 300_000, seed: 81)
        let text = Array(
            (0..<6000).map { "line \($0 % 97): the quick brown fox jumps over the lazy dog\n" }.joined().utf8)
        let floats = (0..<100_000).flatMap { index -> [UInt8] in
            let value = Float(sin(Double(index) / 300)).bitPattern
            return (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
        }
        // The same 400 kB twice: hf_xet stores the repeat's chunks once, and the file's shard cites them again.
        let half = SampleData.bytes(count: 400_000, seed: 82)
        let joined = half + half + SampleData.bytes(count: 100_000, seed: 83)
        let files: [(name: String, bytes: [UInt8])] = [
            ("random.bin", random), ("text.txt", text), ("floats.bin", floats), ("empty.bin", []),
            ("joined.bin", joined),
        ]
        for file in files { try root.write(["sources/\(file.name)": file.bytes]) }
        try FileManager.default.createDirectory(at: root.path("downloads"), withIntermediateDirectories: true)
        try await MirrorFixture.serving(MirrorFixture.xetMirror(root, acceptsUploads: true), root: root) { mirror in
            let answer = try await PythonInteropTests.runPython(
                script: "xet_upload.py",
                [mirror.baseURL.absoluteString, "acme/up", root.path("downloads").path]
                    + files.map { root.path("sources/\($0.name)").path },
                endpoint: mirror.baseURL, home: root.path("home"), interpreter: Self.python)
            let uploads = try #require(answer["uploads"] as? [String: [String: Any]], "\(answer)")
            for file in files {
                let result = try #require(uploads[root.path("sources/\(file.name)").path], "\(file.name): \(answer)")
                #expect(result["sha256"] as? String == SampleData.sha256(file.bytes), "\(file.name) read back")
                #expect(
                    result["hash"] as? String == XetHash.file(of: file.bytes).hash.description,
                    "\(file.name): hf_xet's hash is ours")
            }
            #expect((answer["deduped"] as? Int ?? 0) > 0, "joined.bin's repeat was deduplicated: \(answer)")
            // What hf_xet chose for the chunks: all three schemes came through (text compresses with LZ4, floats
            // with byte grouping, random bytes not at all).
            let kept = root.path(".state/xet/uploads/xorbs")
            var schemes: Set<UInt8> = []
            for name in try FileManager.default.contentsOfDirectory(atPath: kept.path) where !name.hasSuffix(".json") {
                let bytes = try [UInt8](Data(contentsOf: kept.appendingPathComponent(name)))
                var at = 0
                while at + 8 <= bytes.count {
                    schemes.insert(bytes[at + 4])
                    at += 8 + (Int(bytes[at + 1]) | Int(bytes[at + 2]) << 8 | Int(bytes[at + 3]) << 16)
                }
            }
            #expect(schemes == [0, 1, 2], "schemes stored: \(schemes)")
        }
        // A mirror started again on the same folder still has them; another repository's token reads none.
        try await MirrorFixture.serving(MirrorFixture.xetMirror(root, acceptsUploads: true), root: root) { mirror in
            let hash = XetHash.file(of: joined).hash.description
            let own = try await Self.token(mirror, "read", "acme/up")
            let foreign = try await Self.token(mirror, "read", "acme/other")
            let path = "/xet/v1/reconstructions/\(hash)"
            #expect(try await mirror.get(path, headers: [("Authorization", "Bearer \(foreign)")]).status == 404)
            // ModelDepot's own client reads every file hf_xet wrote — its LZ4 frames, its byte grouping, its
            // deduplicated repeat — byte-exact, through the same pull a repository file takes.
            let casURL = try #require(URL(string: mirror.baseURL.absoluteString + "/xet"))
            let access = XetAccess(casURL: casURL, token: own, expires: Date().addingTimeInterval(600))
            for file in files where !file.bytes.isEmpty {
                let target = root.path("ours-\(file.name)")
                let outcome = try await XetPull(
                    hub: HubClient(endpoint: mirror.baseURL), access: access,
                    fileHash: XetHash.file(of: file.bytes).hash.description, size: Int64(file.bytes.count),
                    expectedSHA256: SampleData.sha256(file.bytes), destination: target,
                    partialPath: target.path + ".incomplete", connections: 4
                ).run()
                #expect(try [UInt8](Data(contentsOf: target)) == file.bytes, "\(file.name) through our XetPull")
                #expect(outcome.bytesFromNetwork > 0)
            }
            let plan = try await mirror.get(path, headers: [("Authorization", "Bearer \(own)")])
            let terms = (plan.json as? [String: Any])?["terms"] as? [Any]
            #expect((terms?.count ?? 0) >= 2, "the repeat is a second term citing the same chunks")
            #expect(try await Self.rebuild(plan, mirror) == joined, "read back through its shard after a restart")
        }
    }

    /// The bytes a reconstruction answer describes, fetched from the xorb URLs it gives.
    static func rebuild(_ plan: MirrorFixture.Reply, _ mirror: MirrorFixture) async throws -> [UInt8] {
        try #require(plan.status == 200, "reconstruction: \(plan.status) \(String(decoding: plan.body, as: UTF8.self))")
        let json = try #require(plan.json as? [String: Any])
        let terms = try #require(json["terms"] as? [[String: Any]])
        let fetchInfo = try #require(json["fetch_info"] as? [String: [[String: Any]]])
        var rebuilt: [UInt8] = []
        for term in terms {
            let xorb = try #require(term["hash"] as? String)
            let range = try #require(term["range"] as? [String: Int])
            // The fetch whose chunk range holds the term's (a CAS merges a xorb's ranges).
            let fetch = try #require(
                fetchInfo[xorb]?.first {
                    guard let chunks = $0["range"] as? [String: Int] else { return false }
                    return chunks["start"]! <= range["start"]! && range["end"]! <= chunks["end"]!
                }, "a fetch for \(xorb) \(range)")
            let first = try #require((fetch["range"] as? [String: Int])?["start"])
            let text = try #require(fetch["url"] as? String)
            let url = try #require(URL(string: text))
            let bytes = try #require(fetch["url_range"] as? [String: Int])
            let reply = try await mirror.get(
                url.path + "?" + (url.query ?? ""), headers: [("Range", "bytes=\(bytes["start"]!)-\(bytes["end"]!)")])
            #expect(reply.status == 206)
            let chunks = try XorbChunks.read(reply.body)
            rebuilt += chunks[(range["start"]! - first)..<(range["end"]! - first)].flatMap { $0 }
        }
        return Array(rebuilt.dropFirst(try #require(json["offset_into_first_range"] as? Int)))
    }
}
