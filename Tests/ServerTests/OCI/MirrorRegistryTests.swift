import Foundation
import ModelDepot
import ModelDepotOCI
import ModelDepotTesting
import ModelDepotTransfer
import Testing

/// The mirror as an OCI registry (`/v2/`): real registry clients — `skopeo` and PyPI's `oras` — and our own OCI pull
/// read its models as ModelPack artifacts from the same files the Hub's routes serve, with the mirror's token; a
/// name, digest or host that is not the mirror's is refused.
@Suite struct MirrorRegistryTests {
    static let files: [String: [UInt8]] = [
        "Acme/Tiny-Model/model.safetensors": SampleData.bytes(count: 5 << 20, seed: 21),
        "Acme/Tiny-Model/config.json": Array(#"{"model_type":"llama"}"#.utf8),
        "Acme/Tiny-Model/README.md": Array("# Tiny\n".utf8),
        "acme/other/secret.bin": SampleData.bytes(count: 4096, seed: 22),
    ]
    static let token = "mirror-token-5d1e"

    static func name(_ path: String) -> String { String(path.dropFirst("Acme/Tiny-Model/".count)) }

    @Test func skopeoOrasAndOurPullReadAModelWithTheMirrorsToken() async throws {
        try await MirrorFixture.with(Self.files, token: Self.token) { mirror in
            let scratch = try TemporaryDirectory(prefix: "modeldepot-mirror-registry")
            defer { scratch.remove() }
            let address = "127.0.0.1:\(mirror.baseURL.port!)"

            // Without the token: the registry's challenge, as clients expect it.
            let refused = try await mirror.get("/v2/")
            #expect(refused.status == 401)
            #expect(
                refused.header("WWW-Authenticate")
                    == #"Bearer realm="http://\#(address)/v2/token",service="modeldepot""#)
            #expect(try await mirror.get("/v2/token").status == 401, "the realm hands the token only to its holders")
            let wrong = Data("user:not-it".utf8).base64EncodedString()
            #expect(try await mirror.get("/v2/", headers: [("Authorization", "Basic \(wrong)")]).status == 401)

            // skopeo: Basic credentials, any user name, the token as password; an upper-case id by its OCI name.
            let layout = scratch.path("skopeo")
            try await OCIRegistryTests.run(
                "/usr/bin/skopeo",
                [
                    "copy", "--src-tls-verify=false", "--src-creds", "anyone:\(Self.token)",
                    "docker://\(address)/acme/tiny-model:main", "dir:\(layout.path)",
                ])
            for (path, bytes) in Self.files where path.hasPrefix("Acme/") {
                let blob = layout.appendingPathComponent(OCIDigest(of: bytes).hex)
                #expect(try [UInt8](Data(contentsOf: blob)) == bytes, "skopeo: \(Self.name(path))")
            }

            // oras, logged in the same way, names the files by their paths.
            let oras = scratch.path("oras")
            try await OCIRegistryTests.run(
                OCIRegistryTests.venvPython,
                [
                    "-c",
                    """
                    import oras.client, sys
                    client = oras.client.OrasClient(hostname="\(address)", insecure=True)
                    client.login(
                        hostname="\(address)", username="anyone", password="\(Self.token)", tls_verify=False,
                        config_path=sys.argv[2])
                    client.pull(target="\(address)/acme/tiny-model:main", outdir=sys.argv[1])
                    """, oras.path, scratch.path("oras-auth.json").path,
                ])
            for (path, bytes) in Self.files where path.hasPrefix("Acme/") {
                let file = oras.appendingPathComponent(Self.name(path))
                #expect(try [UInt8](Data(contentsOf: file)) == bytes, "oras: \(Self.name(path))")
            }

            // Our OCI pull (the token as Bearer) gives the very snapshot a Hub pull of the same mirror gives.
            let viaHub = try await SnapshotDownloader(
                hub: HubClient(endpoint: mirror.baseURL, token: Self.token), cache: HubCache(root: scratch.path("hub"))
            ).download(SnapshotRequest(repo: try RepoID("Acme/Tiny-Model")))
            let manager = try ModelManager(
                configuration: .init(
                    endpoint: mirror.baseURL, token: Self.token, cache: HubCache(root: scratch.path("oci"))))
            let reference = try OCIReference(parsing: "oci://\(address)/acme/tiny-model:main")
            let pulled = try await manager.pullModelPack(
                reference,
                client: RegistryClient(registry: reference.registryURL, credential: .bearer(Self.token)))
            #expect(pulled.repo == "Acme/Tiny-Model" && pulled.commit == viaHub.commit)
            for (path, bytes) in Self.files where path.hasPrefix("Acme/") {
                let ociFile = URL(fileURLWithPath: pulled.folder).appendingPathComponent(Self.name(path))
                let hubFile = viaHub.folder.appendingPathComponent(Self.name(path))
                #expect(try [UInt8](Data(contentsOf: ociFile)) == bytes)
                #expect(
                    ociFile.resolvingSymlinksInPath().lastPathComponent
                        == hubFile.resolvingSymlinksInPath().lastPathComponent, "the same blob name")
            }

            // The commit's manifest by digest is the same bytes; skopeo reads it raw.
            let raw = try await OCIRegistryTests.run(
                "/usr/bin/skopeo",
                [
                    "inspect", "--raw", "--tls-verify=false", "--creds", "anyone:\(Self.token)",
                    "docker://\(address)/acme/tiny-model@\(pulled.digest)",
                ])
            #expect(OCIDigest(of: Array(raw.utf8)).description == pulled.digest)
        }
    }

    @Test func namesDigestsAndHostsThatAreNotTheMirrorsAreRefused() async throws {
        try await MirrorFixture.with(Self.files) { mirror in
            let manifest = try await mirror.get("/v2/acme/tiny-model/manifests/main")
            #expect(manifest.status == 200)
            #expect(manifest.header("Content-Type") == OCIMediaType.imageManifest)
            let digest = try #require(manifest.header("Docker-Content-Digest"))
            #expect(OCIDigest(of: manifest.body).description == digest)

            // Upper case is not an OCI name; a name that climbs; a model the mirror does not serve.
            for path in [
                "/v2/Acme/Tiny-Model/manifests/main", "/v2/acme/../acme/tiny-model/manifests/main",
                "/v2/acme/absent/manifests/main",
            ] {
                let reply = try await mirror.get(path)
                #expect(reply.status == 404, "\(path)")
            }
            #expect(try await mirror.get("/v2/acme/tiny-model/manifests/no-such-branch").status == 404)
            let unknown = "sha256:" + String(repeating: "0", count: 64)
            #expect(try await mirror.get("/v2/acme/tiny-model/manifests/\(unknown)").status == 404)
            #expect(try await mirror.get("/v2/acme/tiny-model/blobs/sha256:abc").status == 400)

            // A blob of another model is not reachable under this one's name.
            let secret = OCIDigest(of: Self.files["acme/other/secret.bin"]!)
            let leaked = try await mirror.get("/v2/acme/tiny-model/blobs/\(secret)")
            #expect(leaked.status == 404)
            #expect(leaked.body != Self.files["acme/other/secret.bin"]!)

            // Layers take ranges, from the file the Hub's routes serve.
            let weights = Self.files["Acme/Tiny-Model/model.safetensors"]!
            let part = try await mirror.get(
                "/v2/acme/tiny-model/blobs/\(OCIDigest(of: weights))", headers: [("Range", "bytes=100-199")])
            #expect(part.status == 206 && part.body == Array(weights[100..<200]))

            // A mirror without a token answers only its own names.
            let foreign = try await mirror.get(
                "/v2/acme/tiny-model/manifests/main", headers: [("Host", "evil.example")])
            #expect(foreign.status == 421 || foreign.status == 403 || foreign.status == 400, "status \(foreign.status)")
            #expect(foreign.body != manifest.body)

            let tags = try await mirror.get("/v2/acme/tiny-model/tags/list")
            #expect((tags.json as? [String: Any])?["tags"] as? [String] == ["main"])
        }
    }
}
