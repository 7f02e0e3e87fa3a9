import Foundation
import ModelDepotTesting
import Testing

/// `modeldepot pull oci://…` and `modeldepot push` as a user types them: a model pulled from a mirror's `/v2/` into
/// the cache (the snapshot folder on stdout, JSON with the digest), and usage errors said before anything runs.
@Suite struct OCICommandTests {
    @Test func pullsAModelFromAMirrorsRegistryIntoTheCache() async throws {
        let root = try TemporaryDirectory(prefix: "modeldepot-oci-cli")
        defer { root.remove() }
        let weights = SampleData.bytes(count: 2 << 20, seed: 5)
        try root.write(["models/acme/tiny/model.gguf": weights, "models/acme/tiny/config.json": Array("{}".utf8)])
        let (endpoint, serving) = try await FolderMirror.start(root: root.path("models"))
        defer { serving.cancel() }
        let source = "oci://127.0.0.1:\(endpoint.port!)/acme/tiny:main"
        let cache = root.path("cache").path
        let hub = ["--endpoint", endpoint.absoluteString]
        // Without a Hub to confirm the files, an artifact is not taken for a Hub commit.
        let unconfirmed = try await CLIRunner.run(
            ["pull", source, "--cache-dir", cache, "--endpoint", "http://127.0.0.1:1"])
        #expect(unconfirmed.status == 1 && unconfirmed.stderr.contains("--trust-registry"), "\(unconfirmed.stderr)")
        let output = try await CLIRunner.run(["pull", source, "--cache-dir", cache] + hub)
        #expect(output.status == 0, "\(output.stderr)")
        let folder = try #require(output.stdout.split(separator: "\n").last.map(String.init))
        #expect(folder.hasPrefix(cache + "/models--acme--tiny/snapshots/"), "\(output.stdout)")
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: folder + "/model.gguf"))) == weights)
        #expect(output.stderr.contains("as acme/tiny@"), "\(output.stderr)")

        let json = try await CLIRunner.run(["pull", source, "--cache-dir", cache, "--json"] + hub)
        let event = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        #expect(event?["event"] as? String == "done" && (event?["digest"] as? String)?.hasPrefix("sha256:") == true)
        #expect(event?["filesDownloaded"] as? Int == 0, "the second pull fetched nothing: \(json.stdout)")

        // lock oci:// pins the commit to the artifact; pull --locked takes it from there; verify oci:// holds the
        // cache to it.
        let lockFile = root.path("model.lock.json").path
        let locked = try await CLIRunner.run(["lock", source, "-o", lockFile, "--cache-dir", cache] + hub)
        #expect(locked.status == 0 && locked.stdout.contains(" = oci://"), "\(locked.stdout)\(locked.stderr)")
        let otherCache = root.path("other").path
        let pulled = try await CLIRunner.run(
            ["pull", "--locked", lockFile, "--cache-dir", otherCache, "--endpoint", "http://127.0.0.1:1"])
        #expect(pulled.status == 0, "\(pulled.stderr)")
        let verified = try await CLIRunner.run(["verify", source, "--cache-dir", otherCache])
        #expect(verified.status == 0 && verified.stderr.contains("holds"), "\(verified.stdout)\(verified.stderr)")
        let empty = try await CLIRunner.run(["verify", source, "--cache-dir", root.path("empty").path])
        #expect(empty.status == 1 && empty.stdout.contains("not in the cache"), "\(empty.stdout)\(empty.stderr)")
    }

    @Test func usageErrorsAreSaidBeforeAnythingRuns() async throws {
        let revision = try await CLIRunner.run(["pull", "oci://127.0.0.1:1/acme/tiny:main", "--revision", "v1"])
        #expect(revision.status != 0 && revision.stderr.contains("pulled whole"), "\(revision.stderr)")
        let upper = try await CLIRunner.run(["pull", "oci://127.0.0.1:1/Acme/Tiny:main"])
        #expect(upper.status == 1 && upper.stderr.contains("OCI refuses upper case"), "\(upper.stderr)")
        let notOCI = try await CLIRunner.run(["push", "acme/tiny", "docker://registry/acme/tiny:main"])
        #expect(notOCI.status != 0 && notOCI.stderr.contains("oci://registry/repository:tag"), "\(notOCI.stderr)")
        let root = try TemporaryDirectory(prefix: "modeldepot-oci-cli")
        defer { root.remove() }
        let uncached = try await CLIRunner.run([
            "push", "acme/tiny", "oci://127.0.0.1:1/acme/tiny:main", "--cache-dir", root.path("cache").path,
        ])
        #expect(uncached.status == 1 && uncached.stderr.contains("pull it first"), "\(uncached.stderr)")
        let digestDestination = try await CLIRunner.run([
            "push", "acme/tiny", "oci://127.0.0.1:1/acme/tiny@sha256:" + String(repeating: "0", count: 64),
            "--cache-dir", root.path("cache").path,
        ])
        #expect(digestDestination.status == 1 && digestDestination.stderr.contains("not to a digest"))
    }
}
