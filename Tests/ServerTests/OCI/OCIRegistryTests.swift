import Foundation
import ModelDepot
import ModelDepotOCI
import ModelDepotTesting
import ModelDepotTransfer
import Testing

/// Push and pull of ModelPack artifacts against real components: Debian's CNCF distribution registry (2.8), with
/// and without htpasswd, `skopeo` copying our artifact out and back, PyPI's `oras` pulling it by the OCI title.
@Suite struct OCIRegistryTests {
    /// A small safetensors file (one BF16 tensor of 4×4) followed by weights large enough to take parallel ranges.
    static let safetensors: [UInt8] = {
        let header = Array(#"{"w":{"dtype":"BF16","shape":[4,4],"data_offsets":[0,32]}}"#.utf8)
        var length = UInt64(header.count).littleEndian
        let prefix = withUnsafeBytes(of: &length) { Array($0) }
        return prefix + header + SampleData.bytes(count: 32, seed: 7)
    }()

    static let files: [String: [UInt8]] = [
        "acme/tiny/model.safetensors": safetensors,
        "acme/tiny/weights/extra.bin": SampleData.bytes(count: 6 << 20, seed: 49),
        "acme/tiny/config.json": Array(#"{"model_type":"bert"}"#.utf8),
        "acme/tiny/tokenizer.json": Array(#"{"version":"1.0"}"#.utf8),
        "acme/tiny/README.md": Array("# tiny\n".utf8),
    ]

    /// A cache holding `acme/tiny` as pulled from a mirror of `files`; `body` gets its manager and commit.
    static func withCachedModel(_ body: (ModelManager, String, TemporaryDirectory) async throws -> Void) async throws {
        try await MirrorFixture.with(files) { mirror in
            let scratch = try TemporaryDirectory(prefix: "modeldepot-oci")
            defer { scratch.remove() }
            let manager = try ModelManager(
                configuration: .init(endpoint: mirror.baseURL, cache: HubCache(root: scratch.path("cache"))))
            let snapshot = try await manager.pull.download(SnapshotRequest(repo: try RepoID("acme/tiny")))
            try await body(manager, snapshot.commit, scratch)
        }
    }

    /// A manager of another cache that asks the same Hub (the mirror) as `manager`: what confirms a pulled artifact.
    static func manager(_ root: URL, askingTheHubOf manager: ModelManager) throws -> ModelManager {
        try ModelManager(configuration: .init(endpoint: manager.pull.hub.endpoint, cache: HubCache(root: root)))
    }

    static func client(_ registry: DistributionRegistry, credential: RegistryCredential? = nil) -> RegistryClient {
        RegistryClient(registry: URL(string: "http://\(registry.address)")!, credential: credential)
    }

    @Test func pushedArtifactPullsBackAsTheSameCommitAndASecondPushSendsNothing() async throws {
        try await DistributionRegistry.with { registry in
            try await Self.withCachedModel { manager, commit, scratch in
                let reference = try OCIReference(parsing: "oci://\(registry.address)/acme/tiny:main")
                let client = Self.client(registry)
                let first = try await manager.pushModelPack(try RepoID("acme/tiny"), to: reference, client: client)
                #expect(first.files == 5 && first.blobsUploaded == 5 && first.commit == commit)
                #expect(first.bytesUploaded == Int64(Self.files.values.reduce(0) { $0 + $1.count }))

                // The second push of the same model sends no blob, and gives the same digest.
                let second = try await manager.pushModelPack(try RepoID("acme/tiny"), to: reference, client: client)
                #expect(second.blobsUploaded == 0 && second.blobsPresent == 5 && second.bytesUploaded == 0)
                #expect(second.digest == first.digest)

                // What the registry holds is ModelPack: artifact type, config, raw layers named by file path.
                let fetched = try await client.manifest("acme/tiny", reference: "main")
                #expect(fetched.digest.description == first.digest)
                let manifest = try JSONDecoder().decode(OCIManifest.self, from: Data(fetched.bytes))
                #expect(manifest.artifactType == OCIMediaType.modelManifest)
                #expect(manifest.config.mediaType == OCIMediaType.modelConfig)
                let types = Dictionary(
                    uniqueKeysWithValues: manifest.layers.map {
                        ($0.annotations?[OCIMediaType.filePathAnnotation] ?? "", $0.mediaType)
                    })
                #expect(types["model.safetensors"] == OCIMediaType.weightRaw)
                #expect(types["weights/extra.bin"] == OCIMediaType.weightRaw)
                #expect(types["config.json"] == OCIMediaType.weightConfigRaw)
                #expect(types["README.md"] == OCIMediaType.docRaw)
                let config = try JSONDecoder().decode(
                    ModelPackConfig.self, from: Data(try await client.smallBlob("acme/tiny", manifest.config)))
                #expect(config.config.format == "safetensors" && config.config.precision == "bf16")
                #expect(config.modelfs.diffIDs == manifest.layers.map(\.digest))

                // Pulled into another cache, it is the same commit, with the same blob names Python gave.
                let otherCache = HubCache(root: scratch.path("other-cache"))
                let other = try Self.manager(otherCache.root, askingTheHubOf: manager)
                let pulled = try await other.pullModelPack(reference, client: client)
                #expect(pulled.commit == commit && pulled.filesDownloaded == 5 && pulled.digest == first.digest)
                let source = manager.cache.repository(try RepoID("acme/tiny"), type: .model)
                let copy = otherCache.repository(try RepoID("acme/tiny"), type: .model)
                #expect(copy.commit(forRevision: "main") == commit)
                for (path, bytes) in Self.files {
                    let name = try RepoFilePath(String(path.dropFirst("acme/tiny/".count)))
                    let file = copy.snapshotFile(commit, name)
                    #expect(try [UInt8](Data(contentsOf: file)) == bytes, "\(name) byte-exact")
                    #expect(
                        file.resolvingSymlinksInPath().lastPathComponent
                            == source.snapshotFile(commit, name).resolvingSymlinksInPath().lastPathComponent,
                        "\(name) has the blob name a Hub pull gives it")
                }
                #expect(other.localPath(try RepoID("acme/tiny"), file: "config.json") != nil, "path finds it")

                // By digest, into a plain folder.
                let folder = scratch.path("folder")
                let byDigest = try OCIReference(parsing: "oci://\(registry.address)/acme/tiny@\(first.digest)")
                _ = try await other.pullModelPack(byDigest, client: client, localDirectory: folder)
                for (path, bytes) in Self.files {
                    let name = String(path.dropFirst("acme/tiny/".count))
                    #expect(try [UInt8](Data(contentsOf: folder.appendingPathComponent(name))) == bytes)
                }
                let staging = folder.appendingPathComponent(".cache/modeldepot/oci")
                let left = (try? FileManager.default.contentsOfDirectory(atPath: staging.path)) ?? []
                #expect(
                    left.allSatisfy { $0.hasSuffix(".lock") }, "only lock files stay, as huggingface_hub's: \(left)")
            }
        }
    }

    @Test func skopeoCopiesTheArtifactOutAndBackAndOrasPullsItsFiles() async throws {
        try await DistributionRegistry.with { registry in
            try await Self.withCachedModel { manager, _, scratch in
                let reference = try OCIReference(parsing: "oci://\(registry.address)/acme/tiny:main")
                let pushed = try await manager.pushModelPack(
                    try RepoID("acme/tiny"), to: reference, client: Self.client(registry))
                let layout = scratch.path("skopeo-dir")
                try await Self.run(
                    "/usr/bin/skopeo",
                    [
                        "copy", "--src-tls-verify=false", "docker://\(registry.address)/acme/tiny:main",
                        "dir:\(layout.path)",
                    ])
                try await Self.run(
                    "/usr/bin/skopeo",
                    [
                        "copy", "--dest-tls-verify=false", "dir:\(layout.path)",
                        "docker://\(registry.address)/copied/tiny:v1",
                    ])
                let raw = try await Self.run(
                    "/usr/bin/skopeo",
                    ["inspect", "--raw", "--tls-verify=false", "docker://\(registry.address)/copied/tiny:v1"])
                #expect(
                    OCIDigest(of: Array(raw.utf8)).description == pushed.digest, "skopeo kept the manifest as it is")

                // What skopeo copied back pulls as the same model.
                let other = try Self.manager(scratch.path("from-skopeo"), askingTheHubOf: manager)
                let pulled = try await other.pullModelPack(
                    try OCIReference(parsing: "oci://\(registry.address)/copied/tiny:v1"), client: Self.client(registry)
                )
                #expect(pulled.digest == pushed.digest && pulled.files.count == 5)

                // oras names pulled files by their title: the model's paths.
                let oras = scratch.path("oras")
                try FileManager.default.createDirectory(at: oras, withIntermediateDirectories: true)
                try await Self.run(
                    Self.venvPython,
                    [
                        "-c",
                        """
                        import oras.client, sys
                        client = oras.client.OrasClient(hostname="\(registry.address)", insecure=True)
                        client.pull(target="\(registry.address)/acme/tiny:main", outdir=sys.argv[1])
                        """, oras.path,
                    ])
                for (path, bytes) in Self.files {
                    let name = String(path.dropFirst("acme/tiny/".count))
                    #expect(try [UInt8](Data(contentsOf: oras.appendingPathComponent(name))) == bytes, "oras: \(name)")
                }
            }
        }
    }

    @Test func htpasswdRegistryRefusesAnonymousPushesAndTakesDockersStoredCredential() async throws {
        try await DistributionRegistry.with(user: "depot", password: "s3cret") { registry in
            try await Self.withCachedModel { manager, _, scratch in
                let reference = try OCIReference(parsing: "oci://\(registry.address)/acme/tiny:main")
                let anonymous = await #expect(throws: ModelDepotError.self) {
                    try await manager.pushModelPack(
                        try RepoID("acme/tiny"), to: reference, client: Self.client(registry))
                }
                #expect(anonymous?.code == .unauthorized)
                #expect(anonymous?.message.contains("docker login") == true, "\(anonymous?.message ?? "")")

                // ~/.docker/config.json as docker login writes it: base64 of user:password under the registry.
                let docker = scratch.path("docker")
                try FileManager.default.createDirectory(at: docker, withIntermediateDirectories: true)
                let auth = Data("depot:s3cret".utf8).base64EncodedString()
                try Data(#"{"auths":{"\#(registry.address)":{"auth":"\#(auth)"}}}"#.utf8).write(
                    to: docker.appendingPathComponent("config.json"))
                let stored = try RegistryCredential.stored(
                    for: registry.address, environment: ["DOCKER_CONFIG": docker.path])
                #expect(stored == .basic(user: "depot", password: "s3cret"))
                let pushed = try await manager.pushModelPack(
                    try RepoID("acme/tiny"), to: reference, client: Self.client(registry, credential: stored))
                #expect(pushed.blobsUploaded == 5)

                let wrong = await #expect(throws: ModelDepotError.self) {
                    try await Self.manager(scratch.path("c2"), askingTheHubOf: manager)
                        .pullModelPack(
                            reference, client: Self.client(registry, credential: .basic(user: "depot", password: "no")))
                }
                #expect(wrong?.code == .unauthorized)
                #expect(!FileManager.default.fileExists(atPath: scratch.path("c2/models--acme--tiny").path))
            }
        }
    }

    @Test func aLockPinsTheCommitToTheArtifactAndVerifyAndPullLockedHoldToIt() async throws {
        try await DistributionRegistry.with { registry in
            try await Self.withCachedModel { manager, commit, scratch in
                let reference = try OCIReference(parsing: "oci://\(registry.address)/acme/tiny:main")
                let client = Self.client(registry)
                let pushed = try await manager.pushModelPack(try RepoID("acme/tiny"), to: reference, client: client)
                let locked = try await manager.lockModelPack(reference, client: client)
                #expect(locked.commit == commit && locked.repo.description == "acme/tiny")
                #expect(locked.oci == "oci://\(registry.address)/acme/tiny:main@\(pushed.digest)")
                // The artifact's files are what a Hub lock of the same commit says.
                let fromHub = try await manager.lock([ModelLock.Target(repo: try RepoID("acme/tiny"))])
                #expect(fromHub.repositories.first?.files == locked.files)
                let lock = ModelLock(repositories: [locked])
                let decoded = try JSONDecoder().decode(ModelLock.self, from: lock.encoded())
                #expect(decoded.repositories.first?.oci == locked.oci, "the lock file keeps the artifact")

                // pull --locked takes it from the registry into another cache; verify holds the cache to it.
                let other = try Self.manager(scratch.path("locked"), askingTheHubOf: manager)
                let snapshots = try await other.download(lock: decoded) { _ in client }.result()
                #expect(snapshots.first?.commit == commit)
                #expect(await other.verify(lock: decoded).isEmpty)
                #expect(try await other.verifyModelPack(reference, client: client).isEmpty)
                let weights = other.cache.repository(try RepoID("acme/tiny"), type: .model).snapshotFile(
                    commit, try RepoFilePath("weights/extra.bin")
                ).resolvingSymlinksInPath()
                let handle = try FileHandle(forWritingTo: weights)
                try handle.seek(toOffset: 1000)
                try handle.write(contentsOf: Data([0xFF]))
                try handle.close()
                let problems = try await other.verifyModelPack(reference, client: client)
                #expect(problems.map(\.path) == ["weights/extra.bin"], "\(problems)")

                // A lock whose files the artifact does not hold refuses it before any layer is fetched.
                var forged = locked
                forged.files[0].size += 1
                let third = try Self.manager(scratch.path("third"), askingTheHubOf: manager)
                let error = await #expect(throws: ModelDepotError.self) {
                    try await third.download(lock: ModelLock(repositories: [forged])) { _ in client }.result()
                }
                #expect(error?.code == .checksumMismatch && error?.message.contains("not what the lock names") == true)
                #expect(!FileManager.default.fileExists(atPath: scratch.path("third/models--acme--tiny").path))
            }
        }
    }

    /// An empty multi-platform image layout, which olot adds a model to (olot needs a base image and an index).
    static let baseLayout = #"""
        import hashlib, json, os, sys
        layout = sys.argv[1]
        os.makedirs(f"{layout}/blobs/sha256", exist_ok=True)
        def put(data):
            digest = hashlib.sha256(data).hexdigest()
            open(f"{layout}/blobs/sha256/{digest}", "wb").write(data)
            return {"digest": "sha256:" + digest, "size": len(data)}
        def put_json(obj):
            return put(json.dumps(obj, separators=(",", ":")).encode())
        empty = put(bytes(1024))
        config = put_json({"architecture": "amd64", "os": "linux", "config": {}, "history": [{"created_by": "base"}],
                           "rootfs": {"type": "layers", "diff_ids": [empty["digest"]]}})
        manifest = put_json({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                             "config": {"mediaType": "application/vnd.oci.image.config.v1+json", **config},
                             "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar", **empty}]})
        index = put_json({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
                          "manifests": [{"mediaType": "application/vnd.oci.image.manifest.v1+json", **manifest,
                                         "platform": {"architecture": "amd64", "os": "linux"}}]})
        json.dump({"imageLayoutVersion": "1.0.0"}, open(f"{layout}/oci-layout", "w"))
        json.dump({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
                   "manifests": [{"mediaType": "application/vnd.oci.image.index.v1+json", **index,
                                  "annotations": {"org.opencontainers.image.ref.name": "latest"}}]},
                  open(f"{layout}/index.json", "w"))
        """#

    @Test func olotsModelPackLayoutPushedToTheRegistryPullsIntoAFolder() async throws {
        try await DistributionRegistry.with { registry in
            let scratch = try TemporaryDirectory(prefix: "modeldepot-olot")
            defer { scratch.remove() }
            let model: [String: [UInt8]] = [
                "model/config.json": Array(#"{"model_type":"bert"}"#.utf8),
                "model/model.safetensors": Self.safetensors + SampleData.bytes(count: 300_000, seed: 8),
                "model/sub/tokenizer.json": Array(#"{"version":"1.0"}"#.utf8),
                "README.md": Array("# card\n".utf8),
            ]
            try scratch.write(model)
            let layout = scratch.path("layout")
            try await Self.run(Self.venvPython, ["-c", Self.baseLayout, layout.path])
            try await Self.run(
                Self.venvPython.replacingOccurrences(of: "/python", with: "/olot"),
                [
                    "--add-modelpack", "--root-dir", scratch.path("model").path, "-m", scratch.path("README.md").path,
                    layout.path, scratch.path("model/config.json").path, scratch.path("model/model.safetensors").path,
                    scratch.path("model/sub/tokenizer.json").path,
                ])

            // olot's ModelPack manifest and its blobs, pushed as they are.
            struct Index: Decodable {
                struct Entry: Decodable {
                    var digest: String
                    var annotations: [String: String]?
                }
                var manifests: [Entry]
            }
            let index = try JSONDecoder().decode(
                Index.self, from: Data(contentsOf: layout.appendingPathComponent("index.json")))
            let entry = try #require(
                index.manifests.first { $0.annotations?["io.opendatahub.modelcar.manifest.type"] == "modelpack" })
            let blobs = layout.appendingPathComponent("blobs/sha256")
            let manifestBytes = try [UInt8](
                Data(contentsOf: blobs.appendingPathComponent(String(entry.digest.dropFirst(7)))))
            let manifest = try JSONDecoder().decode(OCIManifest.self, from: Data(manifestBytes))
            #expect(manifest.layers.contains { $0.mediaType == "application/vnd.cncf.model.weight.v1.tar" })
            #expect(manifest.layers.contains { $0.mediaType == "application/vnd.cncf.model.doc.v1.tar+gzip" })
            let client = Self.client(registry)
            for descriptor in manifest.layers + [manifest.config] {
                _ = try await client.pushBlob(
                    "olot/tiny", file: blobs.appendingPathComponent(descriptor.digest.hex), digest: descriptor.digest,
                    size: descriptor.size)
            }
            _ = try await client.pushManifest(
                "olot/tiny", reference: "v1", manifestBytes, mediaType: OCIMediaType.imageManifest)

            // No Hub repository named: into a folder, each file where olot's layout put it (under models/).
            let reference = try OCIReference(parsing: "oci://\(registry.address)/olot/tiny:v1")
            let manager = ModelManager(managingCache: .init(cache: HubCache(root: scratch.path("cache"))))
            let refused = await #expect(throws: ModelDepotError.self) {
                try await manager.pullModelPack(reference, client: client)
            }
            #expect(refused?.message.contains("--local-dir") == true, "\(refused?.message ?? "")")
            let folder = scratch.path("pulled")
            let pulled = try await manager.pullModelPack(reference, client: client, localDirectory: folder)
            #expect(Set(pulled.files) == ["config.json", "model.safetensors", "sub/tokenizer.json", "README.md"])
            for (path, bytes) in model {
                let name = path.hasPrefix("model/") ? String(path.dropFirst("model/".count)) : path
                #expect(try [UInt8](Data(contentsOf: folder.appendingPathComponent(name))) == bytes, "\(name)")
            }
            let staging = folder.appendingPathComponent(".cache/modeldepot/oci")
            let left = (try? FileManager.default.contentsOfDirectory(atPath: staging.path)) ?? []
            #expect(left.allSatisfy { $0.hasSuffix(".lock") }, "only lock files stay, as huggingface_hub's: \(left)")
        }
    }

    static var venvPython: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(".venv-oci/bin/python").path
    }

    /// Runs a peer to its end; throws with its output when it fails. Returns its output.
    @discardableResult
    static func run(_ executable: String, _ arguments: [String]) async throws -> String {
        let log = try TemporaryDirectory(prefix: "modeldepot-peer")
        defer { log.remove() }
        let peer = try PeerProcess(
            URL(fileURLWithPath: executable), arguments, in: log.url, log: log.path("out.log"))
        let succeeded = await peer.waitForExit()
        try #require(succeeded, "\(executable) \(arguments.prefix(2).joined(separator: " ")) failed: \(peer.output)")
        return peer.output
    }
}
