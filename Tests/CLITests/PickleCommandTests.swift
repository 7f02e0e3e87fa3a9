import Foundation
import ModelDepot
import ModelDepotTesting
import Testing

/// Pickled weights found by their bytes, judged without being loaded, and checked against the reference scanners
/// (PyPI picklescan 1.0.5 and fickling 0.1.12, in `.venv-signing`) on benign and malicious samples made in the test.
@Suite(.enabled(if: SigningVenv.isInstalled, "picklescan and fickling are missing (scripts/test installs them)"))
struct PickleCommandTests {
    /// Writes the samples into `folder` and returns the reference scanners' verdicts by sample name.
    static func samples(in folder: URL) async throws -> [String: [String: [String: Any]]] {
        let made = try await SigningVenv.run(script: "pickle_samples.py", ["make", folder.path])
        try #require(made.status == 0, "\(made.stderr)")
        return try #require(
            try JSONSerialization.jsonObject(with: Data(made.stdout.utf8)) as? [String: [String: [String: Any]]])
    }

    @Test func ourVerdictsAgreeWithPicklescanAndFickling() async throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-pickles")
        defer { folder.remove() }
        let verdicts = try await Self.samples(in: folder.url)
        #expect(verdicts.count == 10)
        for (name, verdict) in verdicts.sorted(by: { $0.key < $1.key }) {
            let url = folder.path(name)
            let file = try #require(try PickleFile.inspect(url), "\(name) was not recognised as a pickle")
            let prefix = [UInt8](try Data(contentsOf: url).prefix(PickleFile.sniffLength))
            #expect(PickleFile.sniff(prefix) != nil, "\(name): its first bytes were not recognised")
            let picklescan = try #require(verdict["picklescan"])
            let ours = Set(file.imports.filter { $0.verdict == .dangerous }.map(\.description))
            #expect(file.isDangerous == (picklescan["dangerous"] as? Bool), "\(name): \(file.summary)")
            #expect(name.hasPrefix("evil") == file.isDangerous, "\(name): \(file.summary)")
            let theirs = Set(picklescan["globals"] as? [String] ?? [])
            #expect(theirs.isSubset(of: ours), "\(name): picklescan names \(theirs), we name \(ours)")
            // fickling is stricter (any import it does not know is unsafe): never safe where we see danger, and
            // where it sees none, we see no unknown import either.
            let ficklingSafe = try #require(verdict["fickling"]?["likely_safe"] as? Bool)
            if file.isDangerous { #expect(!ficklingSafe, "\(name)") }
            if ficklingSafe { #expect(file.imports.allSatisfy { $0.verdict == .safe }, "\(name): \(file.imports)") }
        }
        let state = try #require(try PickleFile.inspect(folder.path("benign-state-dict.pkl")))
        #expect(
            state.imports.map(\.description).sorted() == ["collections.OrderedDict", "torch._utils._rebuild_tensor_v2"])
        #expect(state.container == .raw(protocol: 2) && state.summary.contains("of tensors only"))
        let torch = try #require(try PickleFile.inspect(folder.path("evil-torch.pt")))
        #expect(torch.container == .torchZip(pickles: ["evil-torch/data.pkl"]))
        #expect(torch.summary.hasPrefix("DANGEROUS Python pickle (PyTorch ZIP): loading it runs posix.system"))

        // Not pickles, whatever their names: CTranslate2's model.bin, a ZIP without data.pkl.
        #expect(try PickleFile.inspect(folder.path("ctranslate2-model.bin")) == nil)
        #expect(try PickleFile.inspect(folder.path("plain.zip")) == nil)

        // Pickles that cannot be judged are refused by name; nothing is ever unpickled.
        let evil = try Data(contentsOf: folder.path("evil-os-system.pkl"))
        let cases: [([UInt8], String)] = [
            (Array(evil.prefix(evil.count - 6)), "truncated"),
            ([0x80, 0x04] + [UInt8](repeating: 0x28, count: 20_000) + [0x2E], "nests more than 10000 levels deep"),
            ([0x80, 0x04, 0x7D, 0xFF, 0x2E], "opcode 0xff"),
            ([0x80, 0x04, 0x58, 0xFF, 0xFF, 0xFF, 0x7F], "truncated"),
            ([0x80, 0x04, 0x4B, 0x01, 0x93, 0x2E], "underflow"),
        ]
        for (bytes, reason) in cases {
            #expect {
                try PickleScanner.imports(in: bytes)
            } throws: { error in
                (error as? ModelDepotError)?.code == .invalidModelFile
                    && (error as? ModelDepotError)?.message.contains(reason) == true
            }
        }
        let truncatedFile = folder.path("truncated.pkl")
        try Data(evil.prefix(evil.count - 6)).write(to: truncatedFile)
        #expect(throws: ModelDepotError.self) { try PickleFile.inspect(truncatedFile) }
    }

    @Test func infoDryRunAndPolicyFlagPicklesBeforeTheyAreDownloaded() async throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-pickle-repo")
        defer { folder.remove() }
        _ = try await Self.samples(in: folder.path("samples"))
        let repository = folder.path("repos/acme/pickled")
        try FileManager.default.createDirectory(
            at: repository.appendingPathComponent("ct2"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            at: folder.path("samples/evil-torch.pt"), to: repository.appendingPathComponent("pytorch_model.bin"))
        try FileManager.default.copyItem(
            at: folder.path("samples/ctranslate2-model.bin"), to: repository.appendingPathComponent("ct2/model.bin"))
        try Data("{\"model_type\": \"x\"}".utf8).write(to: repository.appendingPathComponent("config.json"))
        try Data(repeating: 1, count: 64).write(to: repository.appendingPathComponent("model.safetensors"))

        let (mirrorURL, serving) = try await FolderMirror.start(root: folder.path("repos"))
        defer { serving.cancel() }
        let endpoint = mirrorURL.absoluteString
        let hub = ["--endpoint", endpoint, "--cache-dir", folder.path("cache").path]

        // Before anything is downloaded: the first bytes say which file is a pickle, and the safetensors beside it.
        let info = try await CLIRunner.run(["info", "acme/pickled"] + hub)
        #expect(info.status == 0, "\(info.stderr)")
        let infoLines = info.stdout.split(separator: "\n")
        let torchLine = try #require(infoLines.first { $0.hasPrefix("pytorch_model.bin") })
        #expect(torchLine.contains("Python pickle (PyTorch ZIP)") && torchLine.contains("model.safetensors"))
        #expect(infoLines.first { $0.hasPrefix("ct2/model.bin") }?.contains("pickle") == false, "\(info.stdout)")
        let plan = try await CLIRunner.run(["pull", "acme/pickled", "--dry-run"] + hub)
        #expect(plan.status == 0, "\(plan.stderr)")
        let flagged = plan.stdout.split(separator: "\n").filter { $0.contains("[pickle:") }
        #expect(flagged.count == 1 && flagged[0].hasSuffix("pytorch_model.bin  [pickle: can run code when loaded]"))

        // The policy refuses before a byte of it is fetched; excluding the pickle satisfies it.
        let refused = try await CLIRunner.run(["pull", "acme/pickled", "--refuse-pickle"] + hub)
        #expect(
            refused.status == 1 && refused.stderr.contains("selects Python pickles")
                && refused.stderr.contains("pytorch_model.bin") && refused.stderr.contains("model.safetensors"),
            "\(refused.stderr)")
        let blobs = folder.path("cache/models--acme--pickled/blobs")
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: blobs.path)) ?? []).isEmpty)
        let safe = try await CLIRunner.run(
            ["pull", "acme/pickled", "--refuse-pickle", "--exclude", "pytorch_model.bin"] + hub)
        #expect(safe.status == 0, "\(safe.stderr)")

        // Downloaded anyway (no policy): read whole, its imports are named, and readiness reports it.
        let pulled = try await CLIRunner.run(["pull", "acme/pickled"] + hub)
        #expect(pulled.status == 0, "\(pulled.stderr)")
        let cachedInfo = try await CLIRunner.run(["info", "acme/pickled", "--json"] + hub)
        #expect(cachedInfo.stdout.contains("DANGEROUS Python pickle (PyTorch ZIP): loading it runs posix.system"))
        let models = ModelManager(managingCache: .init(cache: HubCache(root: folder.path("cache"))))
        let entry = CatalogEntry(
            name: "pickled", repo: try RepoID("acme/pickled"), files: ["*.bin", "config.json"], required: [],
            format: .pytorch, capabilities: [.textGeneration], sizeBytes: 1, description: "pickled")
        let report = try models.readiness(of: entry, verifying: true)
        #expect(report.pickles == ["pytorch_model.bin"] && report.readiness.isLoadable, "\(report)")
        #expect(report.details["pytorch_model.bin"]?.hasPrefix("DANGEROUS") == true)
    }

    /// `pull --refuse-pickle` refuses what the old sniffer let through — a protocol-0 `os.system` pickle named
    /// `weights.bin`, and a torch ZIP whose `data.pkl` is not its first entry (only its central directory, at the end
    /// of the file, names it) — before a byte is downloaded.
    @Test func refusePickleSeesProtocolZeroAndHiddenDataPickles() async throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-pickle-hidden")
        defer { folder.remove() }
        let root = folder.path("repos")
        let protocolZero = root.appendingPathComponent("acme/protocol0")
        let hidden = root.appendingPathComponent("acme/hidden")
        for repository in [protocolZero, hidden] {
            try FileManager.default.createDirectory(at: repository, withIntermediateDirectories: true)
            try Data("{}".utf8).write(to: repository.appendingPathComponent("config.json"))
        }
        try Data("cos\nsystem\n(S'echo pwned'\ntR.".utf8).write(to: protocolZero.appendingPathComponent("weights.bin"))
        let evil = Data(
            [0x80, 0x02] + Array("cposix\nsystem\nX".utf8) + [10, 0, 0, 0] + Array("echo pwned".utf8) + [0x85]
                + Array("R.".utf8))
        try Self.storedZip([
            ("archive/version", Data("3\n".utf8)), ("archive/data/0", Data(count: 70_000)),
            ("archive/data.pkl", evil),
        ]).write(to: hidden.appendingPathComponent("pytorch_model.bin"))

        let (mirrorURL, serving) = try await FolderMirror.start(root: root)
        defer { serving.cancel() }
        let hub = ["--endpoint", mirrorURL.absoluteString, "--cache-dir", folder.path("cache").path]
        for (repo, file) in [("acme/protocol0", "weights.bin"), ("acme/hidden", "pytorch_model.bin")] {
            let refused = try await CLIRunner.run(["pull", repo, "--refuse-pickle"] + hub)
            #expect(
                refused.status == 1 && refused.stderr.contains("selects Python pickles")
                    && refused.stderr.contains(file)
                    // A raw pickle's first bytes show its imports; a ZIP's pickles are not fetched to probe it.
                    && (file != "weights.bin" || refused.stderr.contains("DANGEROUS")),
                "\(repo): \(refused.stderr)")
            let blobs = folder.path("cache/models--\(repo.replacingOccurrences(of: "/", with: "--"))/blobs")
            #expect(((try? FileManager.default.contentsOfDirectory(atPath: blobs.path)) ?? []).isEmpty)
        }
    }

    /// A ZIP of stored entries, in order, as Python's `zipfile` writes one.
    static func storedZip(_ entries: [(String, Data)]) -> Data {
        var local = Data()
        var central = Data()
        func little(_ value: Int, _ width: Int) -> Data { Data((0..<width).map { UInt8((value >> (8 * $0)) & 0xFF) }) }
        for (name, body) in entries {
            let offset = local.count
            let crc = crc32(body)
            let fields = little(crc, 4) + little(body.count, 4) + little(body.count, 4) + little(name.utf8.count, 2)
            local +=
                little(0x0403_4B50, 4) + little(20, 2) + little(0, 2) + little(0, 2) + little(0, 4) + fields
                + little(0, 2) + Data(name.utf8) + body
            central +=
                little(0x0201_4B50, 4) + little(20, 2) + little(20, 2) + little(0, 2) + little(0, 2)
                + little(0, 4) + fields + little(0, 2) + little(0, 2) + little(0, 2) + little(0, 2) + little(0, 4)
                + little(offset, 4) + Data(name.utf8)
        }
        let end =
            little(0x0605_4B50, 4) + little(0, 4) + little(entries.count, 2) + little(entries.count, 2)
            + little(central.count, 4) + little(local.count, 4) + little(0, 2)
        return local + central + end
    }

    static func crc32(_ data: Data) -> Int {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in data {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return Int(~crc)
    }
}

extension SigningVenv {
    /// Runs another peer script of `Tests/PythonPeers` with this venv's Python.
    static func run(script: String, _ arguments: [String]) async throws -> CLIRunner.Output {
        let path = PythonVenv.packageRoot.appendingPathComponent("Tests/PythonPeers/\(script)").path
        let started = try CLIRunner.startProgram(python, [path] + arguments)
        return await CLIRunner.wait(started.0, started.1, started.2)
    }
}
