import Foundation
import ModelDepot
import ModelDepotTesting
import Testing

/// `modeldepot bom` (issue 66) against the references: every bill passes cyclonedx-python-lib's strict validator
/// for CycloneDX 1.6, its purl parses with packageurl-python, its signer is the key model-signing 1.1.1 signed with
/// (fingerprinted by Python's cryptography), and its digests are those Python computes of the published files.
@Suite(.enabled(if: SigningVenv.isInstalled, "the trust venv is missing (scripts/test installs it)"))
struct BillOfMaterialsCommandTests {
    static func peer(_ arguments: [String]) async throws -> CLIRunner.Output {
        try await SigningVenv.run(script: "bom_peer.py", arguments)
    }

    /// Validates the bill at `path` with the reference validator; the purl as packageurl-python reads it.
    static func validated(_ path: URL) async throws -> [String: Any] {
        let verdict = try await peer(["validate", path.path])
        try #require(verdict.status == 0, "\(path.lastPathComponent): \(verdict.stderr)")
        let parsed = try JSONSerialization.jsonObject(with: Data(verdict.stdout.utf8)) as? [String: Any]
        return (parsed?["purl"] as? [String: Any]) ?? [:]
    }

    static func properties(_ component: [String: Any]) -> [(String, String)] {
        ((component["properties"] as? [[String: String]]) ?? []).map { ($0["name"] ?? "", $0["value"] ?? "") }
    }

    static func components(_ bill: Data) throws -> (model: [String: Any], files: [String: [String: Any]]) {
        let document = try #require(try JSONSerialization.jsonObject(with: bill) as? [String: Any])
        let model = try #require((document["components"] as? [[String: Any]])?.first)
        var files: [String: [String: Any]] = [:]
        for file in (model["components"] as? [[String: Any]]) ?? [] { files[file["name"] as! String] = file }
        return (model, files)
    }

    @Test func signedModelsBillNamesItsSignerAndEveryTamperingIsNamed() async throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-bom")
        defer { folder.remove() }
        let keys = try await SigningVenv.prepare(in: folder)
        let trusted = try #require(keys["trusted"])

        // A model with a card and a pickle beside the signed ones.
        let carded = folder.path("repos/acme/carded")
        try FileManager.default.createDirectory(at: carded, withIntermediateDirectories: true)
        try Data(
            """
            ---
            license: apache-2.0
            pipeline_tag: text-generation
            base_model: acme/base-model
            datasets:
              - acme/corpus
              - "acme/more"
            language: [en, fr]
            tags:
            - demo
            model-index:
            - name: carded
              results: []
            ---
            # Carded
            """.utf8
        ).write(to: carded.appendingPathComponent("README.md"))
        // A protocol 2 pickle that imports os.system: the bill must say so.
        try Data([0x80, 0x02] + Array("cos\nsystem\nq\u{0}.".utf8)).write(
            to: carded.appendingPathComponent("pytorch_model.bin"))

        let (mirrorURL, serving) = try await FolderMirror.start(root: folder.path("repos"))
        defer { serving.cancel() }
        let endpoint = mirrorURL.absoluteString
        let cache = folder.path("cache")
        for name in ["good", "carded"] {
            let pulled = try await CLIRunner.run([
                "pull", "acme/\(name)", "--endpoint", endpoint, "--cache-dir", cache.path,
            ])
            try #require(pulled.status == 0, "\(name): \(pulled.stderr)")
        }
        func bom(_ arguments: [String]) async throws -> CLIRunner.Output {
            try await CLIRunner.run(["bom"] + arguments + ["--endpoint", endpoint, "--cache-dir", cache.path])
        }

        // Signed: the signer is the key model-signing used; every digest is Python's of the published file.
        let signedBill = folder.path("good.cdx.json")
        let signed = try await bom(["acme/good", "--trusted-key", trusted, "-o", signedBill.path])
        #expect(signed.status == 0, "\(signed.stderr)")
        let purl = try await Self.validated(signedBill)
        let commit = try #require(
            try String(contentsOf: cache.appendingPathComponent("models--acme--good/refs/main"), encoding: .utf8))
        #expect(purl["type"] as? String == "huggingface")
        #expect(purl["namespace"] as? String == "acme" && purl["name"] as? String == "good")
        #expect(purl["version"] as? String == commit)
        #expect((purl["qualifiers"] as? [String: String])?["repository_url"] == endpoint)
        let fingerprint = try await Self.peer(["fingerprint", trusted])
        let (model, files) = try Self.components(try Data(contentsOf: signedBill))
        let modelProperties = Self.properties(model)
        let signer = try #require(modelProperties.first { $0.0 == "modeldepot:signature.signer" }?.1)
        let expectedFingerprint = fingerprint.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(
            expectedFingerprint.count == 64 && signer == "ECDSA P-256 key sha256:\(expectedFingerprint)",
            "\(signer) against \(fingerprint.stdout)\(fingerprint.stderr)")
        // The mirror serves no dot files, so `.gitattributes` is not in the repository.
        #expect(Set(files.keys) == ["config.json", "sub/notes.txt", "weights.bin", "model.sig"])
        for (path, file) in files {
            let published = try Data(contentsOf: folder.path("repos/acme/good/\(path)"))
            let hashes = file["hashes"] as? [[String: String]]
            #expect(hashes == [["alg": "SHA-256", "content": SampleData.sha256(Array(published))]], "\(path)")
            #expect(Self.properties(file).contains { $0.0 == "modeldepot:verification" && $0.1.hasPrefix("verified") })
        }

        // Signed in shards: a small file changed to the same size with its time put back (a remembered digest would
        // still look current); the signature, held to the bytes as hashed now, fails.
        let shardedPull = try await CLIRunner.run([
            "pull", "acme/sharded", "--endpoint", endpoint, "--cache-dir", cache.path,
        ])
        try #require(shardedPull.status == 0, "\(shardedPull.stderr)")
        let shardedConfig = URL(fileURLWithPath: try #require(shardedPull.lastLine) + "/config.json")
            .resolvingSymlinksInPath()
        let modified = try FileManager.default.attributesOfItem(atPath: shardedConfig.path)[.modificationDate]
        var config = try Data(contentsOf: shardedConfig)
        config[config.count - 3] ^= 0x20
        try config.write(to: shardedConfig)
        try FileManager.default.setAttributes([.modificationDate: modified as Any], ofItemAtPath: shardedConfig.path)
        let shardedBill = try await bom(["acme/sharded", "--trusted-key", trusted])
        #expect(shardedBill.status == 1, "\(shardedBill.stderr)")
        #expect(
            shardedBill.stderr.contains("FAILED signature model.sig:")
                && shardedBill.stderr.contains("config.json differs from what was signed"),
            "\(shardedBill.stderr)")

        // Without a trusted key the signature is there but not checked; the same cache gives the same bytes.
        let first = try await bom(["acme/good"])
        let second = try await bom(["acme/good"])
        #expect(first.status == 0 && first.stdout == second.stdout && !first.stdout.isEmpty)
        #expect(first.stdout.contains("present at model.sig, not checked"))

        // Card and pickle: the licence as SPDX, the task, datasets, languages and base model; os.system named.
        let cardedBill = folder.path("carded.cdx.json")
        let cardedRun = try await bom(["acme/carded", "-o", cardedBill.path])
        #expect(cardedRun.status == 0, "\(cardedRun.stderr)")
        _ = try await Self.validated(cardedBill)
        let (cardedModel, cardedFiles) = try Self.components(try Data(contentsOf: cardedBill))
        #expect(
            (cardedModel["licenses"] as? [[String: String]])?.first?["expression"] == "Apache-2.0",
            "\(cardedModel["licenses"] ?? "none")")
        let parameters = (cardedModel["modelCard"] as? [String: Any])?["modelParameters"] as? [String: Any]
        #expect(parameters?["task"] as? String == "text-generation")
        #expect((parameters?["datasets"] as? [[String: String]])?.map { $0["name"] } == ["acme/corpus", "acme/more"])
        let cardProperties = Self.properties((cardedModel["modelCard"] as? [String: Any]) ?? [:])
        #expect(cardProperties.filter { $0.0 == "language" }.map(\.1) == ["en", "fr"])
        let ancestors = (cardedModel["pedigree"] as? [String: Any])?["ancestors"] as? [[String: String]]
        #expect(ancestors?.first?["purl"]?.hasPrefix("pkg:huggingface/acme/base-model") == true)
        let pickle = Self.properties(try #require(cardedFiles["pytorch_model.bin"]))
        #expect(pickle.contains { $0 == ("modeldepot:pickle", "dangerous") }, "\(pickle)")
        #expect(pickle.contains { $0 == ("modeldepot:pickle.import", "os.system (dangerous)") }, "\(pickle)")

        // Pulled in part: the bill of the whole repository is refused, naming what is missing; the bill of the part
        // pulled is given, marked incomplete.
        let partCache = folder.path("part-cache")
        let part = try await CLIRunner.run([
            "pull", "acme/good", "--include", "config.json", "--endpoint", endpoint, "--cache-dir", partCache.path,
        ])
        try #require(part.status == 0, "\(part.stderr)")
        let whole = try await CLIRunner.run(["bom", "acme/good", "--cache-dir", partCache.path])
        #expect(whole.status != 0 && whole.stderr.contains("weights.bin"), "\(whole.stderr)")
        let partBill = folder.path("part.cdx.json")
        let partRun = try await CLIRunner.run([
            "bom", "acme/good", "--include", "config.json", "--cache-dir", partCache.path, "-o", partBill.path,
        ])
        #expect(partRun.status == 0, "\(partRun.stderr)")
        _ = try await Self.validated(partBill)
        let partDocument = try JSONSerialization.jsonObject(with: try Data(contentsOf: partBill)) as? [String: Any]
        let compositions = partDocument?["compositions"] as? [[String: Any]]
        #expect(compositions?.first?["aggregate"] as? String == "incomplete")
        #expect(Set(try Self.components(try Data(contentsOf: partBill)).files.keys) == ["config.json"])

        // Held to a signature it does not have: not verified. A selection of nothing: no bill.
        let unsigned = try await bom(["acme/carded", "--trusted-key", trusted])
        #expect(
            unsigned.status == 1 && unsigned.stderr.contains("there is no signature at model.sig"), "\(unsigned.stderr)"
        )
        let nothing = try await bom(["acme/carded", "--include", "*.nomatch"])
        #expect(nothing.status != 0 && nothing.stderr.contains("a bill of nothing"), "\(nothing.stderr)")

        // The same bill as SPDX 3.0.1 JSON-LD, read back by the SPDX project's own model (spdx-python-model): the
        // package with its purl, each file with the SHA-256 Python computes of the published file, the licence.
        let spdxBill = folder.path("carded.spdx.json")
        let spdxRun = try await bom(["acme/carded", "--spdx", "-o", spdxBill.path])
        #expect(spdxRun.status == 0, "\(spdxRun.stderr)")
        let spdxVerdict = try await Self.peer(["validate-spdx", spdxBill.path])
        #expect(spdxVerdict.status == 0, "\(spdxVerdict.stderr)")
        let spdx = try JSONSerialization.jsonObject(with: Data(spdxVerdict.stdout.utf8)) as? [String: Any]
        let packages = spdx?["packages"] as? [[String: String]]
        #expect(packages?.map { $0["name"] } == ["acme/carded"], "\(spdxVerdict.stdout)")
        #expect(packages?.first?["purl"]?.hasPrefix("pkg:huggingface/acme/carded@") == true)
        let spdxFiles = spdx?["files"] as? [String: [String]]
        for name in ["README.md", "pytorch_model.bin"] {
            let published = try Data(contentsOf: carded.appendingPathComponent(name))
            #expect(spdxFiles?[name] == [SampleData.sha256(Array(published))], "\(name): \(spdxVerdict.stdout)")
        }
        let spdxText = try String(contentsOf: spdxBill, encoding: .utf8)
        #expect(spdxText.contains(#""simplelicensing_licenseExpression" : "Apache-2.0""#))
        #expect(spdxText.contains("os.system (dangerous)"))

        // A byte of the cached weights flipped: named as failed (never listed as good), exit 1, and the signature,
        // held to the bytes as hashed now, fails too.
        let snapshot = cache.appendingPathComponent("models--acme--good/snapshots/\(commit)")
        let weights = snapshot.appendingPathComponent("weights.bin").resolvingSymlinksInPath()
        var bytes = try Data(contentsOf: weights)
        bytes[4096] ^= 1
        try bytes.write(to: weights)
        let tamperedBill = folder.path("tampered.cdx.json")
        let tampered = try await bom(["acme/good", "--trusted-key", trusted, "-o", tamperedBill.path])
        #expect(tampered.status == 1, "\(tampered.stderr)")
        #expect(tampered.stderr.contains("FAILED weights.bin: its bytes hash to"), "\(tampered.stderr)")
        #expect(tampered.stderr.contains("FAILED signature model.sig"), "\(tampered.stderr)")
        _ = try await Self.validated(tamperedBill)
        let (tamperedModel, tamperedFiles) = try Self.components(try Data(contentsOf: tamperedBill))
        let verification = Self.properties(try #require(tamperedFiles["weights.bin"])).first {
            $0.0 == "modeldepot:verification"
        }
        #expect(verification?.1.hasPrefix("FAILED: the bytes hash to \(SampleData.sha256(Array(bytes)))") == true)
        #expect(Self.properties(tamperedModel).contains { $0 == ("modeldepot:verified", "false") })

        // A file gone from the snapshot: refused, naming it, and no bill written.
        try FileManager.default.removeItem(at: snapshot.appendingPathComponent("sub/notes.txt"))
        let partialBill = folder.path("partial.cdx.json")
        let partial = try await bom(["acme/good", "-o", partialBill.path])
        #expect(partial.status != 0 && partial.stderr.contains("sub/notes.txt"), "\(partial.stderr)")
        #expect(!FileManager.default.fileExists(atPath: partialBill.path))
    }

    /// The same model pulled from the Hub and from an OCI artifact (the mirror's `/v2/`) has the same bill of files;
    /// `bom oci://…` holds the cache to the artifact's layers and names it by digest; `bom --lock` holds it to a lock,
    /// and a byte changed afterwards is named against it.
    @Test func hubAndOCIPullsListTheSameHashesAndLocksAreHeldToTheBytes() async throws {
        let root = try TemporaryDirectory(prefix: "modeldepot-bom-oci")
        defer { root.remove() }
        try root.write([
            "models/acme/tiny/model.gguf": SampleData.bytes(count: 2 << 20, seed: 66),
            "models/acme/tiny/config.json": Array(#"{"a": 1}"#.utf8),
            "models/acme/tiny/README.md": Array("---\nlicense: mit\n---\n# Tiny\n".utf8),
        ])
        let (endpoint, serving) = try await FolderMirror.start(root: root.path("models"))
        defer { serving.cancel() }
        let hub = ["--endpoint", endpoint.absoluteString]
        let fromHub = root.path("hub-cache").path
        let fromOCI = root.path("oci-cache").path
        let source = "oci://127.0.0.1:\(endpoint.port!)/acme/tiny:main"
        let hubPull = try await CLIRunner.run(["pull", "acme/tiny", "--cache-dir", fromHub] + hub)
        try #require(hubPull.status == 0, "\(hubPull.stderr)")
        let ociPull = try await CLIRunner.run(["pull", source, "--cache-dir", fromOCI] + hub)
        try #require(ociPull.status == 0, "\(ociPull.stderr)")

        func bill(_ arguments: [String], name: String) async throws -> (CLIRunner.Output, [String: Any], URL) {
            let file = root.path("\(name).cdx.json")
            let output = try await CLIRunner.run(["bom"] + arguments + ["-o", file.path] + hub)
            guard output.status == 0 || output.status == 1 else { return (output, [:], file) }
            _ = try await Self.validated(file)
            return (output, try Self.components(try Data(contentsOf: file)).model, file)
        }
        func digests(_ model: [String: Any]) -> [String: String] {
            var digests: [String: String] = [:]
            for file in (model["components"] as? [[String: Any]]) ?? [] {
                digests[file["name"] as! String] = (file["hashes"] as? [[String: String]])?.first?["content"]
            }
            return digests
        }
        let (hubRun, hubModel, _) = try await bill(["acme/tiny", "--cache-dir", fromHub], name: "hub")
        // An artifact's tag is not a Hub branch: the OCI pull records the commit, not `refs/main`.
        let commit = try #require(hubModel["version"] as? String)
        let (ociRun, ociModel, _) = try await bill(
            ["acme/tiny", "--revision", commit, "--cache-dir", fromOCI], name: "oci")
        #expect(hubRun.status == 0 && ociRun.status == 0, "\(hubRun.stderr)\(ociRun.stderr)")
        #expect(digests(hubModel).count == 3 && digests(hubModel) == digests(ociModel))
        #expect(hubModel["version"] as? String == ociModel["version"] as? String)

        let (artifactRun, artifactModel, _) = try await bill([source, "--cache-dir", fromOCI], name: "artifact")
        #expect(artifactRun.status == 0, "\(artifactRun.stderr)")
        let lockProperty = Self.properties(artifactModel).first { $0.0 == "modeldepot:lock" }?.1 ?? ""
        #expect(
            lockProperty.hasPrefix("matches oci://127.0.0.1:\(endpoint.port!)/acme/tiny:main@sha256:"),
            "\(lockProperty)")
        #expect(digests(artifactModel) == digests(hubModel))

        let lockFile = root.path("tiny.lock.json").path
        let locked = try await CLIRunner.run(["lock", "acme/tiny", "-o", lockFile, "--cache-dir", fromHub] + hub)
        try #require(locked.status == 0, "\(locked.stderr)")
        let (lockRun, lockModel, _) = try await bill(["--lock", lockFile, "--cache-dir", fromHub], name: "lock")
        #expect(lockRun.status == 0, "\(lockRun.stderr)")
        #expect(Self.properties(lockModel).contains { $0 == ("modeldepot:lock", "matches tiny.lock.json") })

        let snapshot = try #require(hubPull.stdout.split(separator: "\n").last.map(String.init))
        let weights = URL(fileURLWithPath: snapshot + "/model.gguf").resolvingSymlinksInPath()
        var bytes = try Data(contentsOf: weights)
        bytes[7] ^= 1
        try bytes.write(to: weights)
        let (changedRun, changedModel, _) = try await bill(
            ["--lock", lockFile, "--cache-dir", fromHub], name: "changed")
        #expect(changedRun.status == 1, "\(changedRun.stderr)")
        #expect(changedRun.stderr.contains("against tiny.lock.json: model.gguf hashes to"), "\(changedRun.stderr)")
        #expect(
            Self.properties(changedModel).contains {
                $0.0 == "modeldepot:lock" && $0.1.hasPrefix("differs from tiny.lock.json")
            })

        let neither = try await CLIRunner.run(["bom", "--cache-dir", fromHub])
        #expect(neither.status != 0 && neither.stderr.contains("--lock FILE, one of them"), "\(neither.stderr)")
    }

    /// Every Hub licence id the bill writes as an SPDX id is one the validator's SPDX list knows.
    @Test func licenceIdsAreSPDXs() async throws {
        let known = Set(try await Self.peer(["spdx-ids"]).stdout.split(separator: "\n").map(String.init))
        #expect(known.count > 500)
        let unknown = ModelCardMetadata.spdxIdentifiers.values.filter { !known.contains($0) }
        #expect(unknown.isEmpty, "not SPDX ids: \(unknown.sorted())")
    }
}
