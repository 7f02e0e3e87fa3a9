import Foundation
import ModelDepot
import ModelDepotTesting
import Testing

/// What people who come from `hf download` type first: file names after the repository, `hf://` URIs,
/// `--dry-run`, `--force-download`, `--max-workers`.
@Suite struct HFParityTests {
    static func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test func pullTakesFileNamesAndHFURIs() async throws {
        try await HubCommandTests.withHub { endpoint, _, folder in
            let cache = folder.path("cache").path
            let hub = ["--endpoint", endpoint, "--cache-dir", cache]
            // One file, as `hf download REPO FILE`: its path is the last line, and nothing else is fetched.
            let one = try await CLIRunner.run(["pull", "acme/tiny", "config.json"] + hub)
            #expect(one.status == 0, "\(one.stderr)")
            let config = try #require(one.lastLine)
            #expect(config.hasPrefix(cache + "/models--acme--tiny/snapshots/") && config.hasSuffix("/config.json"))
            #expect(try Data(contentsOf: URL(fileURLWithPath: config)) == Data(#"{"a": 1}"#.utf8))
            let snapshot = URL(fileURLWithPath: config).deletingLastPathComponent()
            #expect(!FileManager.default.fileExists(atPath: snapshot.appendingPathComponent("model.gguf").path))
            // A folder through a hf:// URI selects the files under it.
            let sub = try await CLIRunner.run(["pull", "hf://acme/tiny/sub", "--quiet"] + hub)
            #expect(sub.status == 0, "\(sub.stderr)")
            #expect(
                sub.stdout.split(separator: "\n") == [Substring(snapshot.appendingPathComponent("sub/notes.txt").path)])
            // A name that is in the repository neither as a file nor as a folder fails, and says what is there.
            let missing = try await CLIRunner.run(["pull", "acme/tiny", "nope.bin", "config.json"] + hub)
            #expect(missing.status == 1)
            #expect(missing.stderr.contains("has no file or folder 'nope.bin'"), "\(missing.stderr)")
            #expect(missing.stderr.contains("Its files include: config.json"))
            // The other commands take hf:// URIs too; a revision in the URI wins.
            let path = try await CLIRunner.run(["path", "hf://acme/tiny@main/config.json", "--cache-dir", cache])
            #expect(path.status == 0 && path.lastLine == config, "\(path.stderr)")
            let info = try await CLIRunner.run(["info", "hf://acme/tiny", "--json"] + hub)
            #expect(info.status == 0, "\(info.stderr)")
            #expect(try Self.json(info.stdout)["id"] as? String == "acme/tiny")
            let wrongType = try await CLIRunner.run(["path", "hf://datasets/acme/tiny", "--cache-dir", cache])
            #expect(wrongType.status == 1 && wrongType.stderr.contains("not cached"), "\(wrongType.stderr)")
            let removeFile = try await CLIRunner.run([
                "rm", "hf://acme/tiny/config.json", "--yes", "--cache-dir", cache,
            ])
            #expect(removeFile.status == 1 && removeFile.stderr.contains("names a file"), "\(removeFile.stderr)")
            let badURI = try await CLIRunner.run(["pull", "hf://acme", "--quiet"] + hub)
            #expect(badURI.status == 1 && badURI.stderr.contains("names no repository"), "\(badURI.stderr)")
        }
    }

    /// `hf download datasets/org/name` takes the type from the id; a command that names a repository cached
    /// only as another type says which type and the flag to use, not just "not in the cache".
    @Test func typedIdsAndTheTypeThatIsCached() async throws {
        try await HubCommandTests.withHub { endpoint, _, folder in
            let cache = folder.path("cache").path
            let hub = ["--endpoint", endpoint, "--cache-dir", cache]
            let pull = try await CLIRunner.run(["pull", "datasets/acme/corpus", "--quiet"] + hub)
            #expect(pull.status == 0, "\(pull.stderr)")
            #expect(pull.lastLine?.hasPrefix(cache + "/datasets--acme--corpus/snapshots/") == true, "\(pull.stdout)")
            let contradicted = try await CLIRunner.run(["pull", "datasets/acme/corpus", "--repo-type", "model"] + hub)
            #expect(contradicted.status == 1 && contradicted.stderr.contains("--repo-type says model"))

            let hint = "acme/corpus is cached as a dataset, not a model: add --repo-type dataset"
            for command in [
                ["rm", "acme/corpus", "--yes"], ["path", "acme/corpus"], ["info", "acme/corpus", "--offline"],
            ] {
                let output = try await CLIRunner.run(command + ["--cache-dir", cache])
                #expect(output.status == 1 && output.stderr.contains(hint), "\(command): \(output.stderr)")
            }
            let online = try await CLIRunner.run(["info", "acme/corpus"] + hub)
            #expect(online.status == 1 && online.stderr.contains(hint), "\(online.stderr)")
            let status = try await CLIRunner.run(["status", "acme/corpus", "--cache-dir", cache])
            #expect(status.status == 1 && status.stdout.contains(hint), "\(status.stdout)")
            let removed = try await CLIRunner.run(["rm", "datasets/acme/corpus", "--yes", "--cache-dir", cache])
            #expect(removed.status == 0, "\(removed.stderr)")
            #expect(!FileManager.default.fileExists(atPath: cache + "/datasets--acme--corpus"))
        }
    }

    /// A pull of a repository that is all in the cache says so in one progress event: no downloading phase, no
    /// made-up speed, no second `completed` (each once was there).
    @Test func aCachedPullSaysSoInOneEvent() async throws {
        try await HubCommandTests.withHub { endpoint, _, folder in
            let hub = ["--endpoint", endpoint, "--cache-dir", folder.path("cache").path, "--json"]
            let first = try await CLIRunner.run(["pull", "acme/tiny"] + hub)
            #expect(first.status == 0, "\(first.stderr)")
            let again = try await CLIRunner.run(["pull", "acme/tiny"] + hub)
            #expect(again.status == 0, "\(again.stderr)")
            let events = try again.stdout.split(separator: "\n").map { try Self.json(String($0)) }
            let progress = events.filter { $0["event"] as? String == "progress" }
            #expect(progress.allSatisfy { $0["phase"] as? String != "downloading" }, "\(again.stdout)")
            let completed = progress.filter { $0["phase"] as? String == "completed" }
            #expect(completed.count == 1, "\(again.stdout)")
            #expect(completed.first?["alreadyPresent"] as? Bool == true)
            #expect(completed.first?["bytesPerSecond"] as? Double == 0)
            #expect(events.last?["event"] as? String == "completed" && events.last?["filesDownloaded"] as? Int == 0)
            // A pull that downloads reports completion once too.
            let fresh = try await CLIRunner.run(["pull", "acme/tiny"] + hub + ["--force-download"])
            let freshCompleted = fresh.stdout.split(separator: "\n").filter {
                $0.contains(#""event":"progress""#) && $0.contains(#""phase":"completed""#)
            }
            #expect(freshCompleted.count == 1, "\(fresh.stdout)")
        }
    }

    @Test func dryRunSaysWhatAPullWouldFetchAndWritesNothing() async throws {
        try await HubCommandTests.withHub { endpoint, _, folder in
            let cache = folder.path("cache").path
            let hub = ["--endpoint", endpoint, "--cache-dir", cache]
            let fresh = try await CLIRunner.run(["pull", "acme/tiny", "--dry-run", "--json"] + hub)
            #expect(fresh.status == 0, "\(fresh.stderr)")
            let plan = try Self.json(fresh.stdout)
            let files = try #require(plan["files"] as? [[String: Any]])
            #expect(files.compactMap { $0["path"] as? String } == ["config.json", "model.gguf", "sub/notes.txt"])
            #expect(files.allSatisfy { $0["cached"] as? Bool == false && $0["willDownload"] as? Bool == true })
            let total = try #require(plan["totalBytes"] as? Int)
            #expect(total == HubCommandTests.files.values.reduce(0) { $0 + $1.count })
            #expect(plan["downloadBytes"] as? Int == total)
            #expect(HubEncoding.isGitID(plan["commit"] as? String ?? ""))
            let free = try #require(plan["freeBytes"] as? Int)
            #expect(plan["freeBytesAfter"] as? Int == free - total)
            #expect(!FileManager.default.fileExists(atPath: cache + "/models--acme--tiny"), "a dry run writes nothing")

            #expect(try await CLIRunner.run(["pull", "acme/tiny", "config.json", "--quiet"] + hub).status == 0)
            let after = try Self.json(
                try await CLIRunner.run(["pull", "acme/tiny", "--dry-run", "--json"] + hub).stdout)
            let states = try #require(after["files"] as? [[String: Any]]).map {
                ($0["path"] as? String ?? "", $0["cached"] as? Bool ?? false, $0["willDownload"] as? Bool ?? false)
            }
            #expect(states.map(\.1) == [true, false, false] && states.map(\.2) == [false, true, true])
            #expect(after["downloadBytes"] as? Int == total - 8)
            let forced = try Self.json(
                try await CLIRunner.run(["pull", "acme/tiny", "--dry-run", "--json", "--force-download"] + hub).stdout)
            #expect(forced["downloadBytes"] as? Int == total)
            // The text form: one line per file with its state.
            let text = try await CLIRunner.run(["pull", "acme/tiny", "--dry-run"] + hub)
            #expect(text.stdout.contains("2 to download") && text.stdout.contains("cached"), "\(text.stdout)")
            #expect(text.stdout.contains("free space after:"))
        }
    }

    @Test func forceDownloadFetchesAgainAndReplacesADamagedBlob() async throws {
        try await HubCommandTests.withHub { endpoint, _, folder in
            let cache = folder.path("cache").path
            let hub = ["--endpoint", endpoint, "--cache-dir", cache, "--json"]
            #expect(try await CLIRunner.run(["pull", "acme/tiny", "config.json"] + hub).status == 0)
            let repository = HubCache(root: folder.path("cache")).repository(try RepoID("acme/tiny"))
            let blob = repository.blob(GitBlob.id(of: Array(#"{"a": 1}"#.utf8)))
            // Damaged in place, same size: a plain pull trusts the cache; a forced one fetches and replaces it.
            try Data(#"{"a": 2}"#.utf8).write(to: blob)
            func completed(_ output: CLIRunner.Output) throws -> [String: Any] {
                try Self.json(String(try #require(output.stdout.split(separator: "\n").last)))
            }
            let plain = try await CLIRunner.run(["pull", "acme/tiny", "config.json"] + hub)
            #expect(try completed(plain)["filesDownloaded"] as? Int == 0)
            let forced = try await CLIRunner.run(["pull", "acme/tiny", "config.json", "--force-download"] + hub)
            #expect(forced.status == 0, "\(forced.stderr)")
            let event = try completed(forced)
            #expect(event["filesDownloaded"] as? Int == 1)
            #expect((event["paths"] as? [String])?.first?.hasSuffix("/config.json") == true)
            #expect(try Data(contentsOf: blob) == Data(#"{"a": 1}"#.utf8))
            let blobs = try FileManager.default.contentsOfDirectory(atPath: repository.blobsFolder.path)
            #expect(blobs.count == 1, "no work files left: \(blobs)")
            let zero = try await CLIRunner.run(["pull", "acme/tiny", "--max-workers", "0"] + hub)
            #expect(zero.status != 0 && zero.stderr.contains("--max-workers must be between 1 and 64"))
        }
    }

    @Test func lsFiltersSortsAndLimitsAndBarePruneRemovesDetachedRevisions() async throws {
        try await HubCommandTests.withHub { endpoint, _, folder in
            let cache = folder.path("cache").path
            let small = folder.path("repos/acme/small/readme.md")
            try FileManager.default.createDirectory(
                at: small.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data("small\n".utf8).write(to: small)
            for repo in ["acme/tiny", "acme/small"] {
                let pull = try await CLIRunner.run(["pull", repo, "--endpoint", endpoint, "--cache-dir", cache, "-q"])
                #expect(pull.status == 0, "\(pull.stderr)")
            }
            func ids(_ arguments: [String]) async throws -> [String] {
                let output = try await CLIRunner.run(["ls", "--cache-dir", cache, "--json"] + arguments)
                #expect(output.status == 0, "\(output.stderr)")
                let list = try #require(
                    try JSONSerialization.jsonObject(with: Data(output.stdout.utf8)) as? [[String: Any]])
                return list.compactMap { $0["id"] as? String }
            }
            #expect(try await ids(["--filter", "size>1MB"]) == ["acme/tiny"])
            #expect(try await ids(["--filter", "size <= 1KB", "--filter", "files=1"]) == ["acme/small"])
            #expect(try await ids(["--sort", "size:asc"]) == ["acme/small", "acme/tiny"])
            #expect(try await ids(["--sort", "size", "--limit", "1"]) == ["acme/tiny"])
            #expect(try await ids(["--filter", "accessed>7d"]).isEmpty)
            #expect(try await ids(["--filter", "modified<1h", "--sort", "name"]) == ["acme/small", "acme/tiny"])
            let badKey = try await CLIRunner.run(["ls", "--cache-dir", cache, "--filter", "colour>3"])
            #expect(badKey.status == 1 && badKey.stderr.contains("names no known key"), "\(badKey.stderr)")
            let badAge = try await CLIRunner.run(["ls", "--cache-dir", cache, "--filter", "accessed>soon"])
            #expect(badAge.status == 1 && badAge.stderr.contains("age it cannot read"), "\(badAge.stderr)")
            let text = try await CLIRunner.run(["ls", "--cache-dir", cache, "--filter", "size>1MB"])
            #expect(text.stdout.contains("1 repository shown, 1 revision,"), "\(text.stdout)")

            // Like `hf cache prune`, a bare prune removes detached revisions.
            let bare = try await CLIRunner.run(["prune", "--dry-run", "--json", "--cache-dir", cache])
            #expect(bare.status == 0, "\(bare.stderr)")
            #expect(try (Self.json(bare.stdout)["revisions"] as? [Any])?.isEmpty == true, "\(bare.stdout)")
            let help = try await CLIRunner.run(["prune", "--help"])
            #expect(help.stdout.contains("modeldepot prune --max-size <size> [--detached"), "\(help.stdout)")
            let detached = try await CLIRunner.run(["prune", "--detached", "--dry-run", "--json", "--cache-dir", cache])
            #expect(detached.status == 0, "\(detached.stderr)")
            let plan = try Self.json(detached.stdout)
            #expect((plan["revisions"] as? [Any])?.isEmpty == true && plan["dryRun"] as? Bool == true)
            let badAgeOption = try await CLIRunner.run([
                "prune", "--detached", "--older-than", "x", "--cache-dir", cache,
            ])
            #expect(badAgeOption.status == 1 && badAgeOption.stderr.contains("not an age"))
        }
    }

    /// `modeldepot pull --json | head -1`: once the reader is gone, the pull ends quietly with status 141 (a
    /// broken pipe), not with a crash report; what it downloaded is kept to resume.
    @Test func aReaderThatStopsReadingEndsThePullQuietly() async throws {
        try await HubCommandTests.withHub(throttle: 1 << 20) { endpoint, _, folder in
            let script =
                #""$0" pull acme/tiny --endpoint "$1" --cache-dir "$2" --json | head -c 1 > /dev/null; echo "status ${PIPESTATUS[0]}""#
            let (process, out, err) = try CLIRunner.startProgram(
                URL(fileURLWithPath: "/bin/bash"),
                ["-c", script, CLIRunner.executable.path, endpoint, folder.path("cache").path])
            let output = await CLIRunner.wait(process, out, err)
            #expect(output.stdout.contains("status 141"), "\(output.stdout) \(output.stderr)")
            #expect(!output.stderr.contains("Fatal error") && !output.stderr.contains("crashed"), "\(output.stderr)")
        }
    }
}
