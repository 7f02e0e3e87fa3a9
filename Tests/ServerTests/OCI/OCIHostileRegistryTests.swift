import Foundation
import ModelDepot
import ModelDepotOCI
import ModelDepotTesting
import Testing

/// A registry that lies, played by a ``FaultServer`` serving crafted manifests and blobs under `/v2/`: every lie is
/// refused by name, and nothing it sent is left in the cache or the folder (no snapshot, no blob, no partial).
@Suite struct OCIHostileRegistryTests {
    static let weights = SampleData.bytes(count: 5 << 20, seed: 3)
    static let config = Array(#"{"model_type":"bert"}"#.utf8)
    static let commit = String(repeating: "ab", count: 20)

    /// A manifest of `layers` (path → bytes, in order) naming `acme/tiny@commit`, with `edit` applied to each layer.
    static func manifest(
        _ layers: [(String, [UInt8])], edit: (inout OCIDescriptor, Int) -> Void = { _, _ in }
    ) throws -> [UInt8] {
        let configBlob = Array(#"{"descriptor":{},"config":{},"modelfs":{"type":"layers","diff_ids":[]}}"#.utf8)
        let descriptors = layers.enumerated().map { index, layer in
            var descriptor = OCIDescriptor(
                mediaType: OCIMediaType.rawLayerType(forPath: layer.0), digest: OCIDigest(of: layer.1),
                size: Int64(layer.1.count), annotations: [OCIMediaType.filePathAnnotation: layer.0])
            edit(&descriptor, index)
            return descriptor
        }
        return try OCIManifest(
            artifactType: OCIMediaType.modelManifest,
            config: OCIDescriptor(
                mediaType: OCIMediaType.modelConfig, digest: OCIDigest(of: configBlob), size: Int64(configBlob.count)),
            layers: descriptors,
            annotations: [
                OCIMediaType.hubRepositoryAnnotation: "acme/tiny", OCIMediaType.hubCommitAnnotation: commit,
            ]
        ).encoded()
    }

    /// A registry serving `manifest` as `acme/tiny:main` and each of `blobs` under its digest (or `served` bytes).
    static func withRegistry(
        manifest: [UInt8], blobs: [[UInt8]], served: [OCIDigest: [UInt8]] = [:],
        _ body: (FaultServer, OCIReference, TemporaryDirectory) async throws -> Void
    ) async throws {
        var files: [String: [UInt8]] = ["/v2/": Array("{}".utf8), "/v2/acme/tiny/manifests/main": manifest]
        for blob in blobs { files["/v2/acme/tiny/blobs/\(OCIDigest(of: blob))"] = blob }
        for (digest, bytes) in served { files["/v2/acme/tiny/blobs/\(digest)"] = bytes }
        let server = try await FaultServer.start(files: files)
        let scratch = try TemporaryDirectory(prefix: "modeldepot-oci-hostile")
        defer {
            scratch.remove()
            Task { try await server.shutdown() }
        }
        let reference = try OCIReference(
            parsing: "oci://\(server.baseURL.host!):\(server.baseURL.port!)/acme/tiny:main")
        try await body(server, reference, scratch)
    }

    static func manager(_ scratch: TemporaryDirectory) -> ModelManager {
        ModelManager(managingCache: .init(cache: HubCache(root: scratch.path("cache"))))
    }

    static func client(_ reference: OCIReference, credential: RegistryCredential? = nil) -> RegistryClient {
        RegistryClient(registry: reference.registryURL, credential: credential, retryPolicy: .none)
    }

    /// Nothing of the pull is in the cache: no snapshot, no ref, and no blob or partial.
    static func expectNothingPlaced(_ scratch: TemporaryDirectory, sourceLocation: SourceLocation = #_sourceLocation) {
        let repository = scratch.path("cache/models--acme--tiny")
        let snapshots = (try? FileManager.default.contentsOfDirectory(atPath: repository.path + "/snapshots")) ?? []
        let blobs = (try? FileManager.default.contentsOfDirectory(atPath: repository.path + "/blobs")) ?? []
        let refs = (try? FileManager.default.contentsOfDirectory(atPath: repository.path + "/refs")) ?? []
        #expect(
            snapshots.isEmpty && refs.isEmpty, "no snapshot or ref: \(snapshots) \(refs)",
            sourceLocation: sourceLocation)
        #expect(blobs.isEmpty, "no blob or partial left: \(blobs)", sourceLocation: sourceLocation)
    }

    @Test func aManifestThatIsNotTheDigestAskedForIsRefused() async throws {
        let honest = try Self.manifest([("model.safetensors", Self.weights)])
        let forged = try Self.manifest([("model.safetensors", Self.weights), ("extra.json", Self.config)])
        try await Self.withRegistry(manifest: forged, blobs: [Self.weights, Self.config]) {
            server, reference, scratch in
            // Asked by the honest digest, the registry answers with other bytes under that name.
            server.setFile("/v2/acme/tiny/manifests/\(OCIDigest(of: honest))", forged)
            let pinned = reference.pinned(to: OCIDigest(of: honest))
            let error = await #expect(throws: ModelDepotError.self) {
                try await Self.manager(scratch).pullModelPack(pinned, client: Self.client(reference))
            }
            #expect(error?.code == .checksumMismatch)
            #expect(
                error?.message.contains("whose digest is \(OCIDigest(of: forged))") == true, "\(error?.message ?? "")")
            #expect(!server.requests.contains { $0.path.contains("/blobs/") }, "no layer was asked for")
            Self.expectNothingPlaced(scratch)
        }
    }

    @Test func aTagWhoseAnnouncedDigestDiffersFromItsBytesIsRefused() async throws {
        let manifest = try Self.manifest([("model.safetensors", Self.weights)])
        try await Self.withRegistry(manifest: manifest, blobs: [Self.weights]) { server, reference, scratch in
            server.inject(
                .status(200, headers: [("Docker-Content-Digest", OCIDigest(of: Self.config).description)], body: "{}"),
                when: RequestMatcher { $0.path.hasSuffix("/manifests/main") })
            let error = await #expect(throws: ModelDepotError.self) {
                try await Self.manager(scratch).pullModelPack(reference, client: Self.client(reference))
            }
            #expect(error?.code == .checksumMismatch)
            Self.expectNothingPlaced(scratch)
        }
    }

    @Test func aLayerWhoseBytesAreNotItsDigestIsRefusedAndNothingIsPlaced() async throws {
        let manifest = try Self.manifest([("config.json", Self.config), ("model.safetensors", Self.weights)])
        var tampered = Self.weights
        tampered[4 << 20] ^= 0x01
        try await Self.withRegistry(
            manifest: manifest, blobs: [Self.config], served: [OCIDigest(of: Self.weights): tampered]
        ) { _, reference, scratch in
            let error = await #expect(throws: ModelDepotError.self) {
                try await Self.manager(scratch).pullModelPack(reference, client: Self.client(reference))
            }
            #expect(error?.code == .checksumMismatch, "\(String(describing: error))")
            #expect(error?.message.contains("model.safetensors") == true, "\(error?.message ?? "")")
            // The honest config.json it fetched too is gone: the pull placed nothing.
            Self.expectNothingPlaced(scratch)
        }
        // Into a folder: nothing there either, and nothing staged.
        try await Self.withRegistry(
            manifest: manifest, blobs: [Self.config], served: [OCIDigest(of: Self.weights): tampered]
        ) { _, reference, scratch in
            let folder = scratch.path("folder")
            await #expect(throws: ModelDepotError.self) {
                try await Self.manager(scratch).pullModelPack(
                    reference, client: Self.client(reference), localDirectory: folder)
            }
            let left = FileManager.default.enumerator(atPath: folder.path)?.allObjects as? [String] ?? []
            #expect(
                left.allSatisfy {
                    !$0.hasSuffix(".json") && !$0.hasSuffix(".safetensors") && !$0.contains("incomplete")
                }, "\(left)")
        }
    }

    @Test(arguments: ["../escaped.bin", "/etc/modeldepot-escaped", "a/../../escaped.bin", "a/./b", "x\u{0}y"])
    func aPathThatClimbsOutIsRefusedByName(_ path: String) async throws {
        let manifest = try Self.manifest([("model.safetensors", Self.weights)]) { descriptor, _ in
            descriptor.annotations = [OCIMediaType.filePathAnnotation: path]
        }
        try await Self.withRegistry(manifest: manifest, blobs: [Self.weights]) { server, reference, scratch in
            let folder = scratch.path("inner/folder")
            let error = await #expect(throws: ModelDepotError.self) {
                try await Self.manager(scratch).pullModelPack(
                    reference, client: Self.client(reference), localDirectory: folder)
            }
            #expect(error?.code == .protocolViolation)
            #expect(error?.message.contains("outside the model folder") == true, "\(error?.message ?? "")")
            #expect(!server.requests.contains { $0.path.contains("/blobs/") }, "refused before any layer")
            #expect(!FileManager.default.fileExists(atPath: scratch.path("inner/escaped.bin").path))
            #expect(!FileManager.default.fileExists(atPath: "/etc/modeldepot-escaped"))
            let cacheError = await #expect(throws: ModelDepotError.self) {
                try await Self.manager(scratch).pullModelPack(reference, client: Self.client(reference))
            }
            #expect(cacheError?.code == .protocolViolation)
            Self.expectNothingPlaced(scratch)
        }
    }

    @Test func moreLayersThanTheLimitAreRefusedBeforeAnyIsFetched() async throws {
        let many = (0...ModelPackArtifact.maximumLayers).map { ("f\($0).json", Array("\($0)".utf8)) }
        let manifest = try Self.manifest(many)
        try await Self.withRegistry(manifest: manifest, blobs: []) { server, reference, scratch in
            let error = await #expect(throws: ModelDepotError.self) {
                try await Self.manager(scratch).pullModelPack(reference, client: Self.client(reference))
            }
            #expect(error?.code == .protocolViolation)
            #expect(error?.message.contains("\(ModelPackArtifact.maximumLayers + 1) layers") == true)
            #expect(!server.requests.contains { $0.path.contains("/blobs/") })
            Self.expectNothingPlaced(scratch)
        }
    }

    @Test func aLayerOfAnUnknownTypeIsRefusedByItsType() async throws {
        let manifest = try Self.manifest([("model.safetensors", Self.weights)]) { descriptor, _ in
            descriptor.mediaType = "application/vnd.example.runme"
        }
        try await Self.withRegistry(manifest: manifest, blobs: [Self.weights]) { _, reference, scratch in
            let error = await #expect(throws: ModelDepotError.self) {
                try await Self.manager(scratch).pullModelPack(reference, client: Self.client(reference))
            }
            #expect(error?.message.contains("application/vnd.example.runme") == true, "\(error?.message ?? "")")
            Self.expectNothingPlaced(scratch)
        }
    }

    @Test func theTokenNeverFollowsABlobRedirectToAnotherHost() async throws {
        let manifest = try Self.manifest([("model.safetensors", Self.weights)])
        // Blob storage elsewhere that asks for the registry's token.
        let storage = try await FaultServer.start(files: ["/blob": Self.weights])
        defer { Task { try await storage.shutdown() } }
        try await Self.withRegistry(manifest: manifest, blobs: [Self.weights]) { server, reference, scratch in
            let registryURL = server.baseURL.absoluteString
            server.setFile("/token", Array(#"{"token":"registry-secret"}"#.utf8))
            let challenge = #"Bearer realm="\#(registryURL)/token",service="test",scope="repository:acme/tiny:pull""#
            server.inject(
                .status(401, headers: [("WWW-Authenticate", challenge)]),
                when: RequestMatcher { $0.path.hasSuffix("/manifests/main") })
            server.inject(
                .redirect(to: storage.url("/blob").absoluteString, status: 307), times: 20,
                when: RequestMatcher { $0.method == "GET" && $0.path.contains("/blobs/") })
            storage.inject(
                .status(401, headers: [("WWW-Authenticate", #"Bearer realm="\#(storage.url("/token"))""#)]), times: 20)
            let error = await #expect(throws: ModelDepotError.self) {
                try await Self.manager(scratch).pullModelPack(
                    reference, client: Self.client(reference, credential: .basic(user: "u", password: "p")))
            }
            // The engine's word for a refusal where a redirect led: the storage refused, however often asked.
            #expect([.unauthorized, .expiredURL].contains(error?.code), "\(String(describing: error))")
            #expect(
                error?.message.contains("redirected) refused access with HTTP 401") == true, "\(error?.message ?? "")")
            #expect(
                server.requests.contains { $0.header("Authorization") == "Bearer registry-secret" },
                "the registry itself got the token")
            #expect(!storage.requests.isEmpty, "the redirect was followed")
            #expect(
                storage.requests.allSatisfy { $0.header("Authorization") == nil },
                "blob storage on another host never sees a credential: \(storage.requests.map { $0.headers })")
            Self.expectNothingPlaced(scratch)
        }
    }

    @Test func aPickleIsRefusedBeforeItIsPlacedWithRefusePickle() async throws {
        // protocol 2, GLOBAL os.system, STOP: a pickle that imports os.system.
        let pickle: [UInt8] = [0x80, 0x02] + Array("cos\nsystem\n".utf8) + [0x2E]
        let manifest = try Self.manifest([("config.json", Self.config), ("pytorch_model.bin", pickle)])
        try await Self.withRegistry(manifest: manifest, blobs: [Self.config, pickle]) { _, reference, scratch in
            let error = await #expect(throws: ModelDepotError.self) {
                try await Self.manager(scratch).pullModelPack(
                    reference, client: Self.client(reference), policy: DownloadPolicy(refusePickle: true))
            }
            #expect(error?.code == .unsafeFormat)
            #expect(error?.message.contains("pytorch_model.bin") == true, "\(error?.message ?? "")")
            Self.expectNothingPlaced(scratch)
        }
    }

    @Test func anArtifactClaimingACommitTheCacheKnowsOtherwiseIsRefused() async throws {
        let manifest = try Self.manifest([("config.json", Self.config)])
        try await Self.withRegistry(manifest: manifest, blobs: [Self.config]) { _, reference, scratch in
            let manager = Self.manager(scratch)
            // The cache recorded the commit's listing: config.json is another file there.
            _ = try await manager.pullModelPack(reference, client: Self.client(reference))
            let repository = manager.cache.repository(try RepoID("acme/tiny"), type: .model)
            let snapshotFile = repository.snapshotFile(Self.commit, try RepoFilePath("config.json"))
            #expect(try [UInt8](Data(contentsOf: snapshotFile)) == Self.config)
            let forged = try Self.manifest([("config.json", Array(#"{"model_type":"evil"}"#.utf8))])
            let other = try await FaultServer.start(files: [
                "/v2/": Array("{}".utf8), "/v2/acme/tiny/manifests/main": forged,
            ])
            defer { Task { try await other.shutdown() } }
            let otherReference = try OCIReference(parsing: "oci://127.0.0.1:\(other.baseURL.port!)/acme/tiny:main")
            let error = await #expect(throws: ModelDepotError.self) {
                try await manager.pullModelPack(otherReference, client: Self.client(otherReference))
            }
            #expect(error?.code == .checksumMismatch)
            #expect(error?.message.contains("not the file the Hub listed") == true, "\(error?.message ?? "")")
            #expect(try [UInt8](Data(contentsOf: snapshotFile)) == Self.config, "the cached file is untouched")
        }
    }
}
