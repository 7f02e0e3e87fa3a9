import Foundation
import ModelDepotTesting
import Testing

@testable import ModelDepotServer

/// The Hub routes real clients call beyond downloads (paths-info, commits, expanded trees, whoami), the HTTP
/// semantics of file answers (RFC 9110 conditionals, RFC 6266 names), and answers to paths the mirror does not
/// serve — over a real socket, and with the real huggingface_hub.
@Suite struct HubRoutesTests {
    static let layout: [String: [UInt8]] = [
        "acme/tiny/config.json": Array(#"{"a": 1}"#.utf8),
        "acme/tiny/weights/model.safetensors": SampleData.bytes(count: 4096, seed: 3),
        "acme/tiny/quo\"te.txt": Array("quote\n".utf8),
        "acme/tiny/café.txt": Array("café\n".utf8),
    ]

    @Test func pathsInfoAnswersFormsAndJSON() async throws {
        try await MirrorFixture.with(Self.layout) { mirror in
            let form = try await mirror.get(
                "/api/models/acme/tiny/paths-info/main", method: "POST",
                headers: [("Content-Type", "application/x-www-form-urlencoded")],
                body: "paths=config.json&paths=weights&paths=missing.bin&expand=true")
            #expect(form.status == 200, "\(String(decoding: form.body, as: UTF8.self))")
            let entries = try #require(form.json as? [[String: Any]])
            #expect(entries.map { $0["path"] as? String } == ["config.json", "weights"])
            #expect(entries.map { $0["type"] as? String } == ["file", "directory"])
            let commit = try #require(
                form.header("X-Repo-Commit") ?? (entries[0]["lastCommit"] as? [String: Any])?["id"] as? String)
            #expect(entries.allSatisfy { ($0["lastCommit"] as? [String: Any])?["id"] as? String == commit })

            let json = try await mirror.get(
                "/api/models/acme/tiny/paths-info/main", method: "POST",
                headers: [("Content-Type", "application/json")],
                body: #"{"paths": ["weights/model.safetensors"]}"#)
            let file = try #require((json.json as? [[String: Any]])?.first)
            #expect(file["size"] as? Int == 4096)
            #expect(file["lastCommit"] == nil)

            let bad = try await mirror.get(
                "/api/models/acme/tiny/paths-info/main", method: "POST",
                headers: [("Content-Type", "application/json")], body: #"{"nope": 1}"#)
            #expect(bad.status == 400)

            let get = try await mirror.get("/api/models/acme/tiny/paths-info/main")
            #expect(get.status == 405)
            #expect(get.header("Allow") == "POST")
            #expect(get.header("X-Error-Code") == "MethodNotAllowed")
        }
    }

    @Test func commitsAndUnknownPathsAnswerAsTheHub() async throws {
        try await MirrorFixture.with(Self.layout) { mirror in
            let info = try #require(try await mirror.get("/api/models/acme/tiny").json as? [String: Any])
            let commit = try #require(info["sha"] as? String)
            let commits = try await mirror.get("/api/models/acme/tiny/commits/main")
            #expect(commits.status == 200)
            let list = try #require(commits.json as? [[String: Any]])
            #expect(list.map { $0["id"] as? String } == [commit])
            #expect(list.first?["date"] is String)

            let tree = try #require(
                try await mirror.get("/api/models/acme/tiny/tree/main?expand=true").json as? [[String: Any]])
            #expect(!tree.isEmpty)
            #expect(tree.allSatisfy { ($0["lastCommit"] as? [String: Any])?["id"] as? String == commit })

            for path in ["/api/models/acme/tiny/discussions", "/api/spaces-nope", "/nothing/here"] {
                let reply = try await mirror.get(path)
                #expect(reply.status == 404, "\(path)")
                #expect(reply.header("X-Error-Code") == "NotFound", "\(path)")
                #expect(reply.header("Content-Type")?.hasPrefix("application/json") == true, "\(path)")
                #expect((reply.json as? [String: Any])?["error"] is String, "\(path)")
            }
            let missing = try await mirror.get("/api/models/acme/nope/commits/main")
            #expect(missing.header("X-Error-Code") == "RepoNotFound")
        }
    }

    @Test func whoamiSaysWhetherTheTokenIsAccepted() async throws {
        try await MirrorFixture.with(Self.layout) { open in
            let anonymous = try await open.get("/api/whoami-v2")
            #expect(anonymous.status == 401)
            #expect(anonymous.json is [String: Any])
        }
        try await MirrorFixture.with(Self.layout, token: "sesame") { closed in
            let accepted = try await closed.get("/api/whoami-v2", headers: [("Authorization", "Bearer sesame")])
            #expect(accepted.status == 200)
            #expect((accepted.json as? [String: Any])?["type"] as? String == "user")
            let refused = try await closed.get("/api/whoami-v2", headers: [("Authorization", "Bearer nope")])
            #expect(refused.status == 401)
        }
    }

    @Test func conditionalRequestsFollowRFC9110() async throws {
        try await MirrorFixture.with(Self.layout) { mirror in
            let path = "/acme/tiny/resolve/main/weights/model.safetensors"
            let whole = try await mirror.get(path)
            let etag = try #require(whole.header("ETag"))
            let lastModified = try #require(whole.header("Last-Modified"))
            #expect(HTTPDate.parse(lastModified) != nil)

            let same = try await mirror.get(path, headers: [("If-None-Match", etag)])
            #expect(same.status == 304)
            #expect(same.body.isEmpty)
            #expect(same.header("ETag") == etag)
            let weak = try await mirror.get(path, method: "HEAD", headers: [("If-None-Match", "W/\(etag)")])
            #expect(weak.status == 304)
            let other = try await mirror.get(path, headers: [("If-None-Match", "\"other\"")])
            #expect(other.status == 200)
            #expect(other.body == whole.body)

            // A resume of the version the client has gets the range; of another version, the whole file.
            let resume = try await mirror.get(path, headers: [("Range", "bytes=100-199"), ("If-Range", etag)])
            #expect(resume.status == 206)
            #expect(resume.body == Array(whole.body[100..<200]))
            let changed = try await mirror.get(path, headers: [("Range", "bytes=100-199"), ("If-Range", "\"stale\"")])
            #expect(changed.status == 200)
            #expect(changed.body == whole.body)
            let byDate = try await mirror.get(
                path, headers: [("Range", "bytes=100-199"), ("If-Range", "Mon, 01 Jan 2001 00:00:00 GMT")])
            #expect(byDate.status == 200)
            #expect(byDate.body.count == 4096)

            // Several ranges at once: the whole file (documented).
            let multi = try await mirror.get(path, headers: [("Range", "bytes=0-1,10-11")])
            #expect(multi.status == 200)
            #expect(multi.body == whole.body)
        }
    }

    @Test func contentDispositionCarriesAnyName() {
        #expect(ContentDisposition.inline(filename: "model.gguf") == #"inline; filename="model.gguf""#)
        #expect(
            ContentDisposition.inline(filename: "quo\"te.txt")
                == #"inline; filename="quo_te.txt"; filename*=UTF-8''quo%22te.txt"#)
        #expect(
            ContentDisposition.inline(filename: "café.txt")
                == #"inline; filename="caf_.txt"; filename*=UTF-8''caf%C3%A9.txt"#)
        #expect(
            ContentDisposition.inline(filename: "a\\b;c.txt")
                == #"inline; filename="a_b;c.txt"; filename*=UTF-8''a%5Cb%3Bc.txt"#)
    }

    /// curl -J and wget --content-disposition save the files under sane names (both once saved `quo"te.txt`
    /// as `quo`).
    @Test func curlAndWgetSaveTheNamesTheyAreGiven() async throws {
        try await MirrorFixture.with(Self.layout) { mirror in
            let folder = try TemporaryDirectory(prefix: "modeldepot-disposition")
            defer { folder.remove() }
            let quote = mirror.url("/acme/tiny/resolve/main/quo%22te.txt").absoluteString
            let accented = mirror.url("/acme/tiny/resolve/main/caf%C3%A9.txt").absoluteString
            for (tool, arguments) in [
                ("curl", ["-sS", "-J", "-O", quote, "-O", accented]),
                ("wget", ["-q", "--content-disposition", quote, accented]),
            ] {
                let into = folder.path(tool)
                try FileManager.default.createDirectory(at: into, withIntermediateDirectories: true)
                let status = try await Self.runTool(tool, arguments, in: into)
                #expect(status == 0, "\(tool)")
                let saved = try FileManager.default.contentsOfDirectory(atPath: into.path).sorted()
                // curl -J reads only `filename` (the fallback); wget prefers `filename*`, the exact name.
                let expected = tool == "curl" ? ["caf_.txt", "quo_te.txt"] : ["café.txt", "quo\"te.txt"]
                #expect(saved == expected, "\(tool) saved \(saved)")
            }
        }
    }

    /// Python's HfApi calls that got 405 or 404 before: paths-info, commits, an expanded tree, whoami.
    @Test func huggingFaceHubCallsBeyondDownloads() async throws {
        try await MirrorFixture.with(Self.layout, token: "sesame") { mirror in
            let home = try TemporaryDirectory(prefix: "modeldepot-pyhome")
            defer { home.remove() }
            let result = try await PythonInteropTests.runPython(
                script: "hub_routes.py", ["acme/tiny", "sesame"], endpoint: mirror.baseURL, home: home.url)
            let commits = try #require(result["commits"] as? [String])
            #expect(commits.count == 1)
            let infos = try #require(result["pathsInfo"] as? [[String: Any]])
            #expect(infos.map { $0["path"] as? String } == ["config.json", "weights"])
            #expect(infos.map { $0["kind"] as? String } == ["RepoFile", "RepoFolder"])
            #expect(infos.allSatisfy { $0["lastCommit"] as? String == commits[0] })
            let tree = try #require(result["tree"] as? [String: String])
            #expect(tree["config.json"] == commits[0])
            #expect(result["whoami"] as? String == "modeldepot-mirror")
        }
    }

    static func runTool(_ tool: String, _ arguments: [String], in folder: URL) async throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/\(tool)")
        process.arguments = arguments
        process.currentDirectoryURL = folder
        guard await process.runToEnd() else { return -1 }
        return process.terminationStatus
    }
}
