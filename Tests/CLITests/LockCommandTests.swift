import Foundation
import ModelDepot
import ModelDepotTesting
import Testing

/// `lock`, `pull --locked`, `verify --lock` and `lock --check` as a user runs them, against our mirror.
@Suite struct LockCommandTests {
    static func lock(_ file: URL) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any])
    }

    /// Locks all of acme/tiny into `folder/modeldepot.lock` and pulls it into `folder/source-cache`; returns the
    /// lock file and the `--cache-dir` arguments of that cache.
    static func lockAndPull(endpoint: String, folder: TemporaryDirectory) async throws -> (URL, [String]) {
        let lockFile = folder.path("modeldepot.lock")
        let source = ["--cache-dir", folder.path("source-cache").path]
        let locked = try await CLIRunner.run(["lock", "acme/tiny", "-o", lockFile.path, "--endpoint", endpoint])
        #expect(locked.status == 0, "\(locked.stderr)")
        let pulled = try await CLIRunner.run(["pull", "--locked", lockFile.path, "--endpoint", endpoint] + source)
        try #require(pulled.status == 0, "\(pulled.stderr)")
        return (lockFile, source)
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

    @Test func aBundleCarriesTheLockToAnOfflineCacheThatPythonReads() async throws {
        try await HubCommandTests.withHub { endpoint, _, folder in
            let (lockFile, source) = try await Self.lockAndPull(endpoint: endpoint, folder: folder)
            let bundle = folder.path("bundle")
            let exported = try await CLIRunner.run(["export", "--lock", lockFile.path, "--to", bundle.path] + source)
            #expect(
                exported.status == 0 && exported.stdout.contains("exported 3 files"),
                "\(exported.stdout)\(exported.stderr)")
            #expect(
                FileManager.default.fileExists(
                    atPath: bundle.appendingPathComponent("models/acme/tiny/sub/notes.txt").path))
            let again = try await CLIRunner.run(["export", "--lock", lockFile.path, "--to", bundle.path] + source)
            #expect(again.status == 1 && again.stderr.contains("is not empty"))

            // Into a cache on a machine with no network (no endpoint is given): placed, verified, and Python's
            // huggingface_hub loads it offline.
            let target = folder.path("offline-cache")
            let imported = try await CLIRunner.run(["import", bundle.path, "--cache-dir", target.path])
            #expect(
                imported.status == 0 && imported.stdout.contains("3 files verified and placed"), "\(imported.stderr)")
            let verified = try await CLIRunner.run(["verify", "--lock", lockFile.path, "--cache-dir", target.path])
            #expect(verified.status == 0, "\(verified.stdout)\(verified.stderr)")
            let python = try CLIRunner.startProgram(
                PythonVenv.python,
                [
                    PythonVenv.packageRoot.appendingPathComponent("Tests/PythonPeers/cache_peer.py").path, "load",
                    target.path, "acme/tiny", "config.json",
                ]
            ) { $0.environment = ProcessInfo.processInfo.environment.merging(["HF_HUB_OFFLINE": "1"]) { $1 } }
            let seen = await CLIRunner.wait(python.0, python.1, python.2)
            #expect(seen.status == 0, "\(seen.stderr)")
            let paths = try #require(
                try JSONSerialization.jsonObject(with: Data(seen.stdout.utf8)) as? [String: String])
            #expect(try Data(contentsOf: URL(fileURLWithPath: try #require(paths["file"]))) == Data(#"{"a": 1}"#.utf8))
            let snapshot = URL(fileURLWithPath: try #require(paths["snapshot"]))
            #expect(
                try Data(contentsOf: snapshot.appendingPathComponent("model.gguf")) == Data(HubCommandTests.weights))
            // Importing again (an interrupted import run anew) keeps what is placed and succeeds.
            #expect(try await CLIRunner.run(["import", bundle.path, "--cache-dir", target.path]).status == 0)

            // Bad bundles are refused by name; the structural ones before anything is placed.
            func variant(_ name: String, _ change: (URL) throws -> Void) throws -> URL {
                let copy = folder.path(name)
                try FileManager.default.copyItem(at: bundle, to: copy)
                try change(copy)
                return copy
            }
            let cases: [(URL, String, Bool)] = [
                (
                    try variant("extra") {
                        try Data("x".utf8).write(to: $0.appendingPathComponent("models/acme/tiny/extra.bin"))
                    },
                    "holds models/acme/tiny/extra.bin, which its lock does not name", false
                ),
                (
                    try variant("missing") {
                        try FileManager.default.removeItem(
                            at: $0.appendingPathComponent("models/acme/tiny/config.json"))
                    },
                    "lacks models/acme/tiny/config.json", false
                ),
                (
                    try variant("link") {
                        let file = $0.appendingPathComponent("models/acme/tiny/config.json")
                        try FileManager.default.removeItem(at: file)
                        try FileManager.default.createSymbolicLink(
                            atPath: file.path, withDestinationPath: "/etc/passwd")
                    }, "holds a link, models/acme/tiny/config.json", false
                ),
                (
                    try variant("tampered") {
                        let file = $0.appendingPathComponent("models/acme/tiny/model.gguf")
                        var bytes = try Data(contentsOf: file)
                        bytes[1000] ^= 0xFF
                        try bytes.write(to: file)
                    }, "acme/tiny/model.gguf in the bundle is", true
                ),
            ]
            for (index, (bad, expected, _)) in cases.enumerated() {
                let cache = folder.path("bad-cache-\(index)")
                let refused = try await CLIRunner.run(["import", bad.path, "--cache-dir", cache.path])
                #expect(
                    refused.status == 1 && refused.stderr.contains(expected),
                    "\(bad.lastPathComponent): \(refused.stderr)")
                let blobs =
                    (try? FileManager.default.contentsOfDirectory(
                        atPath: cache.appendingPathComponent("models--acme--tiny/blobs").path)) ?? []
                #expect(
                    !blobs.contains(SampleData.sha256(HubCommandTests.weights)),
                    "\(bad.lastPathComponent) placed the weights")
                #expect(blobs.allSatisfy { !$0.hasSuffix(".import") }, "\(bad.lastPathComponent) left \(blobs)")
                if index < 3 { #expect(blobs.isEmpty, "\(bad.lastPathComponent) placed \(blobs)") }
                // A refused bundle links nothing, not even the files verified before the bad one (config.json
                // comes first), so neither we nor Python load a partial snapshot.
                let repository = cache.appendingPathComponent("models--acme--tiny")
                let snapshots =
                    (try? FileManager.default.contentsOfDirectory(
                        atPath: repository.appendingPathComponent("snapshots").path)) ?? []
                #expect(snapshots.isEmpty, "\(bad.lastPathComponent) left snapshots \(snapshots)")
                #expect(!FileManager.default.fileExists(atPath: repository.appendingPathComponent("refs").path))
            }
        }
    }

    @Test func anAppLayoutIsReadInPlaceAndVerifiedOncePerBuild() async throws {
        try await HubCommandTests.withHub { endpoint, _, folder in
            let (lockFile, source) = try await Self.lockAndPull(endpoint: endpoint, folder: folder)
            let models = folder.path("App.app/Models")
            let exported = try await CLIRunner.run(
                ["export", "--lock", lockFile.path, "--to", models.path, "--layout", "app"] + source)
            #expect(exported.status == 0, "\(exported.stderr)")
            let weights = models.appendingPathComponent("models--acme--tiny/model.gguf")
            let mode = try FileManager.default.attributesOfItem(atPath: weights.path)[.posixPermissions] as? NSNumber
            #expect(mode?.intValue == 0o444)
            #expect(try Data(contentsOf: weights) == Data(HubCommandTests.weights))
            let tarred = try await CLIRunner.run(
                ["export", "--lock", lockFile.path, "--archive", folder.path("a.tar").path, "--layout", "app"] + source)
            #expect(tarred.status != 0 && tarred.stderr.contains("give --to DIR"), "\(tarred.stderr)")
            try await Self.readBundled(models, records: folder.path("records"), cache: folder.path("empty-cache"))

            // The same folder imports into a cache like any bundle.
            let imported = try await CLIRunner.run(["import", models.path, "--cache-dir", folder.path("cache").path])
            #expect(imported.status == 0 && imported.stdout.contains("3 files verified"), "\(imported.stderr)")
        }
    }

    /// An app's manager over the bundled folder `models` and an empty cache: unverified until verified, then found
    /// in place; verified once per build, and again when the build (or, without one, a file's size or time) changes.
    static func readBundled(_ models: URL, records: URL, cache: URL) async throws {
        let filesBefore = try FileManager.default.subpathsOfDirectory(atPath: models.path).sorted()
        let repo = try RepoID("acme/tiny")
        let entry = CatalogEntry(
            name: "tiny", repo: repo, files: ["*.gguf", "config.json"], required: ["model.gguf"], format: .gguf,
            capabilities: [.textGeneration], sizeBytes: Int64(HubCommandTests.weights.count), description: "tiny")
        let offline = HubEnvironment(variables: ["HF_HUB_OFFLINE": "1"])
        func manager(version: String?) throws -> ModelManager {
            var configuration = ModelManager.Configuration(environment: offline)
            configuration.cache = HubCache(root: cache)
            configuration.bundled = try BundledModels(folder: models, records: records, version: version)
            return ModelManager(managingCache: configuration)
        }
        let app = try manager(version: "1")
        #expect(app.localPath(repo) == nil && !app.isComplete(entry))
        let before = try app.readiness(of: entry)
        #expect(before.storage == .bundled && before.readiness == .unverified(["config.json", "model.gguf"]))
        let total = Int64(HubCommandTests.weights.count + 8 + 6)
        #expect(try await app.verifyBundledModels() == .verified(bytes: total))
        #expect(app.localPath(repo) == models.appendingPathComponent("models--acme--tiny"))
        #expect(
            app.localPath(repo, file: "config.json") == models.appendingPathComponent("models--acme--tiny/config.json"))
        #expect(app.localPath(repo, revision: "other") == nil && app.localPath(repo, file: "absent.bin") == nil)
        let after = try app.readiness(of: entry)
        #expect(after.readiness == .ready && after.folder == app.localPath(repo) && app.isComplete(entry))
        #expect(app.readyModels(in: try ModelCatalog(models: [entry])).map(\.name) == ["tiny"])

        // The next launch of the same build hashes nothing, even if the bytes changed meanwhile: once per build.
        let weights = models.appendingPathComponent("models--acme--tiny/model.gguf")
        let good = try Data(contentsOf: weights)
        var damaged = good
        damaged[4096] ^= 0xFF
        try damaged.write(to: weights)
        #expect(try await manager(version: "1").verifyBundledModels() == .alreadyVerified)
        // A new build checks again and names the damage; nothing is remembered, so it stays unverified.
        let next = try manager(version: "2")
        await #expect(throws: ModelDepotError.self) { try await next.verifyBundledModels() }
        do {
            try await next.verifyBundledModels()
        } catch let error as ModelDepotError {
            #expect(error.code == .checksumMismatch && error.message.contains("acme/tiny/model.gguf"), "\(error)")
        }
        #expect(next.localPath(repo) == nil && !next.isComplete(entry))
        #expect(try next.readiness(of: entry).readiness == .unverified(["config.json", "model.gguf"]))
        #expect(throws: ModelDepotError.self) { try next.readiness(of: entry, verifying: true) }

        // Without a build number, the files' sizes and times stand in: restored bytes verify, a rewrite rechecks.
        try good.write(to: weights)
        let unversioned = try manager(version: nil)
        #expect(try await unversioned.verifyBundledModels() == .verified(bytes: total))
        #expect(try await unversioned.verifyBundledModels() == .alreadyVerified)
        try damaged.write(to: weights)
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSinceNow: 60)], ofItemAtPath: weights.path)
        #expect(!unversioned.bundled!.isVerified && unversioned.localPath(repo) == nil)
        await #expect(throws: ModelDepotError.self) { try await unversioned.verifyBundledModels() }
        try good.write(to: weights)
        try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: weights.path)

        // Read in place: the bundle folder gained nothing; verification records live elsewhere.
        #expect(try FileManager.default.subpathsOfDirectory(atPath: models.path).sorted() == filesBefore)
        #expect(try FileManager.default.contentsOfDirectory(atPath: records.path).count == 1)
    }

    @Test func aTarBundleRoundTripsAndHostileArchivesAreRefused() async throws {
        try await HubCommandTests.withHub { endpoint, _, folder in
            let (lockFile, source) = try await Self.lockAndPull(endpoint: endpoint, folder: folder)
            let archive = folder.path("bundle.tar")
            let exported = try await CLIRunner.run(
                ["export", "--lock", lockFile.path, "--archive", archive.path] + source)
            #expect(exported.status == 0, "\(exported.stderr)")
            // Python's tarfile reads what we wrote: the lock first, then the files, plain and unchanged.
            let listing = try CLIRunner.startProgram(
                PythonVenv.python,
                [
                    "-c",
                    "import json,sys,tarfile; t=tarfile.open(sys.argv[1]); print(json.dumps([[m.name, m.size, m.isfile()] for m in t]))",
                    archive.path,
                ])
            let listed = await CLIRunner.wait(listing.0, listing.1, listing.2)
            let entries = try #require(
                try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[Any]], "\(listed.stderr)")
            #expect(
                entries.map { $0[0] as? String } == [
                    "modeldepot.lock", "models/acme/tiny/config.json", "models/acme/tiny/model.gguf",
                    "models/acme/tiny/sub/notes.txt",
                ])
            #expect(entries.allSatisfy { $0[2] as? Bool == true })

            let target = ["--cache-dir", folder.path("offline-cache").path]
            let imported = try await CLIRunner.run(["import", archive.path] + target)
            #expect(
                imported.status == 0 && imported.stdout.contains("3 files verified and placed"), "\(imported.stderr)")
            #expect(try await CLIRunner.run(["verify", "--lock", lockFile.path] + target).status == 0)

            // Archives written by Python's tarfile with a link, a climbing name, an absolute name or an extra file.
            let bundle = folder.path("bundle")
            #expect(
                try await CLIRunner.run(["export", "--lock", lockFile.path, "--to", bundle.path] + source).status == 0)
            let writer = try CLIRunner.startProgram(
                PythonVenv.python,
                [
                    PythonVenv.packageRoot.appendingPathComponent("Tests/PythonPeers/hostile_tar.py").path, bundle.path,
                    folder.path("hostile").path,
                ])
            let written = await CLIRunner.wait(writer.0, writer.1, writer.2)
            let made = try JSONSerialization.jsonObject(with: Data(written.stdout.utf8))
            let hostile = try #require(made as? [String: String], "\(written.stderr)")
            let expected = [
                "link": "holds a link, models/acme/tiny/evil", "escape": "a path that leaves the bundle",
                "absolute": "a path that leaves the bundle",
                "extra": "holds models/acme/tiny/extra.bin, which its lock does not name",
            ]
            for (name, message) in expected.sorted(by: { $0.key < $1.key }) {
                let cache = folder.path("hostile-cache-\(name)")
                let refused = try await CLIRunner.run([
                    "import", try #require(hostile[name]), "--cache-dir", cache.path,
                ])
                #expect(refused.status == 1 && refused.stderr.contains(message), "\(name): \(refused.stderr)")
                #expect(
                    !FileManager.default.fileExists(atPath: cache.appendingPathComponent("models--acme--tiny").path),
                    "\(name) placed files")
            }
            #expect(!FileManager.default.fileExists(atPath: "/tmp/modeldepot-absolute.txt"))
            #expect(!FileManager.default.fileExists(atPath: folder.path("escaped.txt").path))

            // The bundle folder repacked by GNU tar, in its POSIX (PAX headers, `./` names, folders) and GNU formats.
            for format in ["posix", "gnu"] {
                let repacked = folder.path("repacked-\(format).tar")
                let tar = try CLIRunner.startProgram(
                    URL(fileURLWithPath: "/usr/bin/env"),
                    ["tar", "--format=\(format)", "-cf", repacked.path, "-C", bundle.path, "."])
                let packed = await CLIRunner.wait(tar.0, tar.1, tar.2)
                #expect(packed.status == 0, "\(packed.stderr)")
                let cache = folder.path("repacked-cache-\(format)")
                let imported = try await CLIRunner.run(["import", repacked.path, "--cache-dir", cache.path])
                #expect(
                    imported.status == 0 && imported.stdout.contains("3 files verified and placed"),
                    "\(format): \(imported.stderr)")
            }
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
