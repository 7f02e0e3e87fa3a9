import Foundation
import ModelDepot
import ModelDepotTesting
import Testing

/// `lock`, `pull --locked`, `verify --lock` and `lock --check` as a user runs them, against our mirror.
@Suite struct LockCommandTests {
    static func lock(_ file: URL) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any])
    }

    @Test func aLockPullsExactlyItsBytesAndRefusesAnyDifference() async throws {
        try await HubCommandTests.withHub { endpoint, _, folder in
            let lockFile = folder.path("modeldepot.lock")
            let locked = try await CLIRunner.run([
                "lock", "acme/tiny", "--exclude", "sub/*", "-o", lockFile.path, "--endpoint", endpoint,
            ])
            #expect(locked.status == 0, "\(locked.stderr)")
            #expect(
                locked.stdout.contains("acme/tiny@main -> ") && locked.stdout.contains("2 files"), "\(locked.stdout)")
            // Sorted, readable, both kinds of digest, and where it came from.
            let text = try String(contentsOf: lockFile, encoding: .utf8)
            let repository = try #require((try Self.lock(lockFile)["repositories"] as? [[String: Any]])?.first)
            let files = try #require(repository["files"] as? [[String: Any]])
            #expect(files.map { $0["path"] as? String } == ["config.json", "model.gguf"])
            #expect(
                files[0]["gitBlob"] as? String != nil
                    && files[1]["sha256"] as? String == SampleData.sha256(HubCommandTests.weights))
            #expect(repository["endpoint"] as? String == endpoint && repository["revision"] as? String == "main")
            #expect((repository["source"] as? [String: Any])?["exclude"] as? [String] == ["sub/*"])
            #expect(text.hasSuffix("}\n") && text.contains("\"version\" : 1"))
            // Locking again gives the same bytes: stable, diff-friendly.
            let again = try await CLIRunner.run([
                "lock", "acme/tiny", "--exclude", "sub/*", "-o", folder.path("again.lock").path, "--endpoint", endpoint,
            ])
            let againText = try String(contentsOf: folder.path("again.lock"), encoding: .utf8)
            #expect(again.status == 0 && againText == text)

            // Pull exactly that into an empty cache, then verify the cache against the lock.
            let cache = ["--cache-dir", folder.path("cache").path]
            let pulled = try await CLIRunner.run(["pull", "--locked", lockFile.path, "--endpoint", endpoint] + cache)
            #expect(pulled.status == 0, "\(pulled.stderr)")
            #expect(pulled.stderr.contains("2 files match the lock"), "\(pulled.stderr)")
            let snapshot = URL(fileURLWithPath: try #require(pulled.lastLine))
            let pulledFiles = try FileManager.default.contentsOfDirectory(atPath: snapshot.path).sorted()
            #expect(pulledFiles == ["config.json", "model.gguf"])
            let verified = try await CLIRunner.run(["verify", "--lock", lockFile.path] + cache)
            #expect(
                verified.status == 0 && verified.stderr.contains("2 files match"),
                "\(verified.stdout)\(verified.stderr)")

            // A cached file changed behind our back: verify --lock names it and exits 1.
            let config = snapshot.appendingPathComponent("config.json")
            let blob = config.resolvingSymlinksInPath()
            let original = try Data(contentsOf: blob)
            try Data(#"{"a": 2}"#.utf8).write(to: blob)
            let damaged = try await CLIRunner.run(["verify", "--lock", lockFile.path, "--json"] + cache)
            #expect(damaged.status == 1)
            let problems = try #require(
                (try JSONSerialization.jsonObject(with: Data(damaged.stdout.utf8)) as? [String: Any])?["problems"]
                    as? [[String: String]])
            #expect(
                problems.map { $0["path"] } == ["config.json"]
                    && problems[0]["problem"]?.contains("the lock says git:") == true)
            try original.write(to: blob)

            // A lock whose digest differs from what the endpoint offers is refused before anything is fetched.
            var tampered = try Self.lock(lockFile)
            var repositories = try #require(tampered["repositories"] as? [[String: Any]])
            var lockedFiles = try #require(repositories[0]["files"] as? [[String: Any]])
            lockedFiles[1]["sha256"] = String(repeating: "ab", count: 32)
            repositories[0]["files"] = lockedFiles
            tampered["repositories"] = repositories
            let tamperedFile = folder.path("tampered.lock")
            try JSONSerialization.data(withJSONObject: tampered).write(to: tamperedFile)
            let fresh = ["--cache-dir", folder.path("fresh-cache").path]
            let refused = try await CLIRunner.run(
                ["pull", "--locked", tamperedFile.path, "--endpoint", endpoint] + fresh)
            #expect(refused.status == 1)
            #expect(
                refused.stderr.contains("offers model.gguf of acme/tiny@") && refused.stderr.contains("Refusing it"),
                "\(refused.stderr)")
            #expect(
                !FileManager.default.fileExists(atPath: folder.path("fresh-cache/models--acme--tiny/snapshots").path))

            // The branch moves on at the endpoint: --check says so and exits 1, and --update follows it (a folder
            // mirror derives commits from content, so the old commit is gone there).
            let unchanged = try await CLIRunner.run(["lock", "--check", "-o", lockFile.path, "--endpoint", endpoint])
            #expect(
                unchanged.status == 0 && unchanged.stdout.contains("still names its locked commit"),
                "\(unchanged.stdout)\(unchanged.stderr)")
            try Data(#"{"a": 3}"#.utf8).write(to: folder.path("repos/acme/tiny/config.json"))
            let moved = try await CLIRunner.run(["lock", "--check", "-o", lockFile.path, "--endpoint", endpoint])
            #expect(
                moved.status == 1 && moved.stdout.contains("acme/tiny@main moved: locked "),
                "\(moved.stdout)\(moved.stderr)")
            let updated = try await CLIRunner.run(["lock", "--update", "-o", lockFile.path, "--endpoint", endpoint])
            #expect(updated.status == 0, "\(updated.stderr)")
            let after = try await CLIRunner.run(["lock", "--check", "-o", lockFile.path, "--endpoint", endpoint])
            #expect(after.status == 0)
            let updatedText = try String(contentsOf: lockFile, encoding: .utf8)
            #expect(updatedText != text)
        }
    }

    @Test func badLockFilesAreRefusedByName() async throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-badlock")
        defer { folder.remove() }
        let commit = String(repeating: "a", count: 40)
        func lock(_ files: String, commit: String = commit, version: Int = 1) -> String {
            #"{"version": \#(version), "repositories": [{"endpoint": "http://127.0.0.1:9", "type": "model", "repo": "acme/tiny", "revision": "main", "commit": "\#(commit)", "source": {}, "files": [\#(files)]}]}"#
        }
        let sha = String(repeating: "0", count: 64)
        let cases: [(String, String)] = [
            ("not json", "is not a ModelDepot lock"),
            (lock(#"{"path": "a", "size": 1, "sha256": "\#(sha)"}"#, version: 2), "its version is 2"),
            (
                lock(#"{"path": "a", "size": 1, "sha256": "\#(sha)"}, {"path": "a", "size": 1, "sha256": "\#(sha)"}"#),
                "names a twice"
            ),
            (lock(#"{"path": "../etc/passwd", "size": 1, "sha256": "\#(sha)"}"#), "leaves the repository"),
            (lock(#"{"path": "a", "size": 1, "sha256": "abc"}"#), "not 64 hexadecimal digits"),
            (lock(#"{"path": "a", "size": 1}"#), "needs exactly one digest"),
            (lock(#"{"path": "a", "size": 1, "sha256": "\#(sha)"}"#, commit: "main"), "not 40 hexadecimal digits"),
        ]
        for (index, (contents, expected)) in cases.enumerated() {
            let file = folder.path("bad-\(index).lock")
            try Data(contents.utf8).write(to: file)
            let pulled = try await CLIRunner.run([
                "pull", "--locked", file.path, "--cache-dir", folder.path("cache").path,
            ])
            #expect(pulled.status == 1 && pulled.stderr.contains(expected), "case \(index): \(pulled.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: folder.path("cache/models--acme--tiny").path))
        let both = try await CLIRunner.run(["pull", "acme/tiny", "--locked", "x.lock"])
        #expect(both.status != 0 && both.stderr.contains("--locked pulls what the lock names"))
    }
}
