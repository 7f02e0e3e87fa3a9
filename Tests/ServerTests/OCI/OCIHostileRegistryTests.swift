import Foundation
import ModelDepot
import ModelDepotOCI
import ModelDepotTesting
import ModelDepotTrust
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
                OCIMediaType.hubRevisionAnnotation: "main",
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
                try await Self.manager(scratch).pullModelPack(
                    pinned, client: Self.client(reference), trustingRegistry: true)
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
                try await Self.manager(scratch).pullModelPack(
                    reference, client: Self.client(reference), trustingRegistry: true)
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
                try await Self.manager(scratch).pullModelPack(
                    reference, client: Self.client(reference), trustingRegistry: true)
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
                try await Self.manager(scratch).pullModelPack(
                    reference, client: Self.client(reference), trustingRegistry: true)
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
                try await Self.manager(scratch).pullModelPack(
                    reference, client: Self.client(reference), trustingRegistry: true)
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
                try await Self.manager(scratch).pullModelPack(
                    reference, client: Self.client(reference), trustingRegistry: true)
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
                    reference, client: Self.client(reference, credential: .basic(user: "u", password: "p")),
                    trustingRegistry: true)
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
                    reference, client: Self.client(reference), policy: DownloadPolicy(refusePickle: true),
                    trustingRegistry: true)
            }
            #expect(error?.code == .unsafeFormat)
            #expect(error?.message.contains("pytorch_model.bin") == true, "\(error?.message ?? "")")
            Self.expectNothingPlaced(scratch)
        }
    }

    @Test func anArtifactIsTakenForAHubCommitOnlyWhenItsFilesAreTheCommits() async throws {
        let manifest = try Self.manifest([("config.json", Self.config)])
        try await Self.withRegistry(manifest: manifest, blobs: [Self.config]) { _, reference, scratch in
            // No Hub to ask (offline): refused, unless the registry is trusted, a signature or a lock vouches.
            let manager = Self.manager(scratch)
            let unconfirmed = await #expect(throws: ModelDepotError.self) {
                try await manager.pullModelPack(reference, client: Self.client(reference))
            }
            #expect(unconfirmed?.message.contains("--trust-registry") == true, "\(unconfirmed?.message ?? "")")
            Self.expectNothingPlaced(scratch)

            // A Hub that lists other bytes for the commit: refused, though the registry is consistent in itself.
            let hubListing =
                #"[{"type":"file","path":"config.json","size":18,"oid":"\#(String(repeating: "1", count: 40))"}]"#
            let hub = try await FaultServer.start(files: [
                "/api/models/acme/tiny/tree/\(Self.commit)": Array(hubListing.utf8),
                "/api/models/acme/tiny/tree/\(Self.commit)/": Array(hubListing.utf8),
            ])
            defer { Task { try await hub.shutdown() } }
            let asking = try ModelManager(
                configuration: .init(endpoint: hub.baseURL, cache: HubCache(root: scratch.path("cache"))))
            let differs = await #expect(throws: ModelDepotError.self) {
                try await asking.pullModelPack(reference, client: Self.client(reference))
            }
            #expect(differs?.code == .checksumMismatch, "\(String(describing: differs))")
            // The artifact names no git blob id: the bytes are held to the Hub's as they arrive, and refused.
            #expect(differs?.message.contains("config.json") == true, "\(differs?.message ?? "")")
            Self.expectNothingPlaced(scratch)

            // A listing the cache recorded holds even a trusted registry to it; a ref the cache has is not moved.
            let repository = manager.cache.repository(try RepoID("acme/tiny"), type: .model)
            try repository.recordTree(
                RecordedTree(files: [
                    try RepoFilePath("config.json"): .init(size: 18, blobID: String(repeating: "1", count: 40))
                ]),
                commit: Self.commit)
            let recorded = await #expect(throws: ModelDepotError.self) {
                try await manager.pullModelPack(reference, client: Self.client(reference), trustingRegistry: true)
            }
            #expect(recorded?.code == .checksumMismatch)
        }
    }

    @Test func aTrustedArtifactNeverMakesOrMovesARef() async throws {
        let manifest = try Self.manifest([("config.json", Self.config)])
        try await Self.withRegistry(manifest: manifest, blobs: [Self.config]) { _, reference, scratch in
            // The registry's word places the files, but no ref: only the Hub says what a branch names.
            let manager = Self.manager(scratch)
            let repository = manager.cache.repository(try RepoID("acme/tiny"), type: .model)
            let pulled = try await manager.pullModelPack(
                reference, client: Self.client(reference), trustingRegistry: true)
            #expect(pulled.commit == Self.commit)
            #expect(repository.commit(forRevision: "main") == nil, "no ref made on the registry's word")
            // An existing ref stays where it was.
            let other = String(repeating: "cd", count: 20)
            try repository.setRef("main", to: other)
            _ = try await manager.pullModelPack(reference, client: Self.client(reference), trustingRegistry: true)
            #expect(repository.commit(forRevision: "main") == other)
        }
    }

    @Test func aLayerCannotReplaceABlobNamedByAGitID() async throws {
        // The annotation names the git blob id of other content, a cached blob of another snapshot.
        let genuine = Array(#"{"genuine":true}"#.utf8)
        let genuineID = GitBlob.id(of: genuine)
        let manifest = try Self.manifest([("config.json", Self.config)]) { descriptor, _ in
            descriptor.annotations?[OCIMediaType.hubBlobIDAnnotation] = genuineID
        }
        try await Self.withRegistry(manifest: manifest, blobs: [Self.config]) { _, reference, scratch in
            let manager = Self.manager(scratch)
            let repository = manager.cache.repository(try RepoID("acme/tiny"), type: .model)
            try HubCache.createFolder(repository.blob(genuineID).deletingLastPathComponent())
            try Data(genuine).write(to: repository.blob(genuineID))
            let error = await #expect(throws: ModelDepotError.self) {
                try await manager.pullModelPack(reference, client: Self.client(reference), trustingRegistry: true)
            }
            #expect(error?.code == .checksumMismatch, "\(String(describing: error))")
            #expect(try [UInt8](Data(contentsOf: repository.blob(genuineID))) == genuine, "the genuine blob is intact")
        }
    }

    // MARK: - Tar layers

    /// One ustar member: a header of `type` (`0` a file, `2` a symbolic link to `link`) and its content, padded.
    static func tarMember(_ name: String, type: Character = "0", content: [UInt8] = [], link: String = "") -> [UInt8] {
        var header = [UInt8](repeating: 0, count: 512)
        func put(_ text: String, at offset: Int) {
            for (index, byte) in text.utf8.enumerated() { header[offset + index] = byte }
        }
        put(name, at: 0)
        put("0000644", at: 100)
        put("0000000", at: 108)
        put("0000000", at: 116)
        put(String(content.count, radix: 8).leftPadded(to: 11), at: 124)
        put("00000000000", at: 136)
        header[156] = type.asciiValue!
        put(link, at: 157)
        put("ustar", at: 257)
        put("00", at: 263)
        for index in 148..<156 { header[index] = 32 }
        let sum = header.reduce(0) { $0 + Int($1) }
        put(String(sum, radix: 8).leftPadded(to: 6), at: 148)
        header[154] = 0
        let padding = (512 - content.count % 512) % 512
        return header + content + [UInt8](repeating: 0, count: padding)
    }

    static func tar(_ members: [[UInt8]]) -> [UInt8] { members.flatMap { $0 } + [UInt8](repeating: 0, count: 1024) }

    /// `bytes` as one gzip member of stored DEFLATE blocks, with its CRC-32 (or `crc` instead).
    static func gzip(_ bytes: [UInt8], crc: UInt32? = nil) -> [UInt8] {
        var out: [UInt8] = [0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 3]
        var chunks = stride(from: 0, to: max(bytes.count, 1), by: 65535).map {
            Array(bytes[$0..<min($0 + 65535, bytes.count)])
        }
        if chunks.isEmpty { chunks = [[]] }
        for (index, chunk) in chunks.enumerated() {
            let length = UInt16(chunk.count)
            out += [
                index == chunks.count - 1 ? 1 : 0, UInt8(length & 0xFF), UInt8(length >> 8), UInt8(~length & 0xFF),
                UInt8(~length >> 8),
            ]
            out += chunk
        }
        let sum = crc ?? CRC32.checksum(bytes)
        let size = UInt32(bytes.count)
        for value in [sum, size] { out += [0, 8, 16, 24].map { UInt8((value >> UInt32($0)) & 0xFF) } }
        return out
    }

    /// A manifest of one tar layer (olot's way: named by its title only).
    static func archiveManifest(_ layer: [UInt8], mediaType: String) throws -> [UInt8] {
        let configBlob = Array(#"{"descriptor":{},"config":{},"modelfs":{"type":"layers","diff_ids":[]}}"#.utf8)
        return try OCIManifest(
            artifactType: OCIMediaType.modelManifest,
            config: OCIDescriptor(
                mediaType: OCIMediaType.modelConfig, digest: OCIDigest(of: configBlob), size: Int64(configBlob.count)),
            layers: [
                OCIDescriptor(
                    mediaType: mediaType, digest: OCIDigest(of: layer), size: Int64(layer.count),
                    annotations: [OCIMediaType.titleAnnotation: "model.bin"])
            ], annotations: nil
        ).encoded()
    }

    /// Tar layers that are not plain files inside the model, by what is wrong, and the words that refuse them.
    static let hostileTars: [String: (layer: [UInt8], reason: String)] = [
        "a link": (tar([tarMember("models/model.bin", type: "2", link: "/etc/passwd")]), "holds a link"),
        "a hard link": (tar([tarMember("models/model.bin", type: "1", link: "models/x")]), "holds a link"),
        "a climbing name": (
            tar([tarMember("models/../../escaped.bin", content: [1, 2, 3])]), "leaves the model folder"
        ),
        "an absolute name": (tar([tarMember("/etc/escaped.bin", content: [1])]), "leaves the model folder"),
        "a device": (tar([tarMember("models/dev", type: "3")]), "only plain files are taken"),
        "a size past the end": (
            Array(tarMember("models/big.bin", content: [UInt8](repeating: 7, count: 600)).prefix(700)), "cut short"
        ),
    ]

    @Test(arguments: hostileTars.keys.sorted())
    func aTarLayerHoldingWhatIsNotAPlainFileIsRefused(_ label: String) async throws {
        let (layer, reason) = Self.hostileTars[label]!
        let manifest = try Self.archiveManifest(layer, mediaType: "application/vnd.cncf.model.weight.v1.tar")
        try await Self.withRegistry(manifest: manifest, blobs: [layer]) { _, reference, scratch in
            let folder = scratch.path("folder")
            let error = await #expect(throws: ModelDepotError.self, "\(label)") {
                try await Self.manager(scratch).pullModelPack(
                    reference, client: Self.client(reference), localDirectory: folder)
            }
            #expect(error?.message.contains(reason) == true, "\(label): \(error?.message ?? "")")
            let left = FileManager.default.enumerator(atPath: folder.path)?.allObjects as? [String] ?? []
            #expect(
                left.allSatisfy {
                    $0 == ".cache"
                        || $0.hasPrefix(".cache/modeldepot") && !$0.hasSuffix(".bin") && !$0.contains(".layer")
                }, "\(label): \(left)")
            #expect(!FileManager.default.fileExists(atPath: scratch.path("escaped.bin").path))
        }
    }

    @Test func aGzipLayerWhoseChecksumLiesIsRefusedAndAnHonestOneUnpacks() async throws {
        let tar = Self.tar([Self.tarMember("models/model.bin", content: Self.config)])
        for (crc, succeeds) in [(UInt32(0xDEAD_BEEF), false), (nil, true)] {
            let layer = Self.gzip(tar, crc: crc)
            let manifest = try Self.archiveManifest(layer, mediaType: "application/vnd.cncf.model.weight.v1.tar+gzip")
            try await Self.withRegistry(manifest: manifest, blobs: [layer]) { _, reference, scratch in
                let folder = scratch.path("folder")
                let pull = {
                    try await Self.manager(scratch).pullModelPack(
                        reference, client: Self.client(reference), localDirectory: folder)
                }
                if succeeds {
                    _ = try await pull()
                    #expect(try [UInt8](Data(contentsOf: folder.appendingPathComponent("model.bin"))) == Self.config)
                } else {
                    let error = await #expect(throws: ModelDepotError.self) { try await pull() }
                    #expect(error?.message.contains("CRC-32") == true, "\(error?.message ?? "")")
                    #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("model.bin").path))
                }
            }
        }
    }
}

extension String {
    /// The string with `0`s in front, to `width` characters (tar's octal fields).
    fileprivate func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
