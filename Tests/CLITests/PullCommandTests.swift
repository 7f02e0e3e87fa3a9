import Foundation
import ModelDepotTesting
import Testing

@Suite struct PullCommandTests {
    @Test func pullPrintsTheAbsolutePathLastAndVerifies() async throws {
        let bytes = SampleData.bytes(count: 3 << 20, seed: 11)
        let server = try await FaultServer.start(files: ["/files/weights.bin": bytes])
        defer { Task { try? await server.shutdown() } }
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let output = try await CLIRunner.run(
            ["pull", server.url("/files/weights.bin").absoluteString, "--sha256", SampleData.sha256(bytes), "--quiet"],
            in: folder.url)
        #expect(output.status == 0, "\(output.stderr)")
        let path = try #require(output.lastLine)
        #expect(path.hasPrefix("/") && path.hasSuffix("/weights.bin"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(bytes))
        #expect(output.stdout == path + "\n")
    }

    @Test func jsonModePrintsOneObjectPerLine() async throws {
        let bytes = SampleData.bytes(count: 1 << 20, seed: 12)
        let server = try await FaultServer.start(files: ["/m.bin": bytes])
        defer { Task { try? await server.shutdown() } }
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let output = try await CLIRunner.run([
            "pull", server.url("/m.bin").absoluteString, "-o", folder.path("out.bin").path, "--json",
        ])
        #expect(output.status == 0, "\(output.stderr)")
        let objects = try output.stdout.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(objects.count >= 2)
        #expect(objects.dropLast().allSatisfy { $0["event"] as? String == "progress" })
        let last = try #require(objects.last)
        #expect(last["event"] as? String == "completed")
        #expect(last["path"] as? String == folder.path("out.bin").path)
        #expect(last["sha256"] as? String == SampleData.sha256(bytes))
    }

    @Test func aWrongHashFailsWithAnErrorAndNoFile() async throws {
        let bytes = SampleData.bytes(count: 100_000, seed: 13)
        let server = try await FaultServer.start(files: ["/m.bin": bytes])
        defer { Task { try? await server.shutdown() } }
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let wrong = String(repeating: "0", count: 64)
        let output = try await CLIRunner.run(
            ["pull", server.url("/m.bin").absoluteString, "--sha256", wrong], in: folder.url)
        #expect(output.status == 1)
        let lastError = output.stderr.split(separator: "\n").last.map(String.init) ?? ""
        #expect(lastError.hasPrefix("error: "))
        #expect(lastError.contains(wrong))
        #expect(output.stdout.isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path).isEmpty)
    }

    @Test func badInputGetsAClearError() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let notURL = try await CLIRunner.run(["pull", "not a url"], in: folder.url)
        #expect(notURL.status == 1)
        #expect(notURL.stderr.contains("error: ") && notURL.stderr.contains("http"))

        let badHash = try await CLIRunner.run(["pull", "http://127.0.0.1:9/x.bin", "--sha256", "xyz"], in: folder.url)
        #expect(badHash.status == 1)
        #expect(badHash.stderr.contains("64 hexadecimal"))

        let connections = try await CLIRunner.run(
            ["pull", "http://127.0.0.1:9/x.bin", "--connections", "0"], in: folder.url)
        #expect(connections.status == 64)
        #expect(connections.stderr.contains("--connections must be between 1 and 64"))

        try Data("x".utf8).write(to: folder.path("a-file"))
        let unwritable = try await CLIRunner.run(
            ["pull", "http://127.0.0.1:9/x.bin", "-o", folder.path("a-file/inside.bin").path], in: folder.url)
        #expect(unwritable.status == 1)
        #expect(unwritable.stderr.contains("error: Cannot create the folder"))

        // The library names the variable, the CLI the flag.
        let endpoint = try await CLIRunner.run(["pull", "acme/tiny", "--endpoint", "ftp://mirror"], in: folder.url)
        #expect(endpoint.status == 1)
        #expect(endpoint.stderr.contains("'ftp://mirror' (HF_ENDPOINT) is not a Hub URL"), "\(endpoint.stderr)")
        #expect(endpoint.stderr.contains("(or --endpoint URL)"), "\(endpoint.stderr)")
    }

    @Test func aServerErrorIsReportedWithTheStatus() async throws {
        let server = try await FaultServer.start(files: [:])
        defer { Task { try? await server.shutdown() } }
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let output = try await CLIRunner.run(["pull", server.url("/missing.bin").absoluteString], in: folder.url)
        #expect(output.status == 1)
        #expect(output.stderr.contains("404"))
    }

    @Test func demoPullsTheSampleModelFromTheEmbeddedHub() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let cache = folder.path("cache").path
        let output = try await CLIRunner.run(["demo", "--size-mib", "4", "--cache-dir", cache])
        #expect(output.status == 0, "\(output.stderr)")
        let snapshot = try #require(output.lastLine)
        #expect(snapshot.hasPrefix(cache + "/models--demo--tiny-chat/snapshots/"))
        #expect(output.stderr.contains("faults recovered: 2"))
        #expect(output.stderr.contains("re-verified 4 blobs: all good"))
        if output.stderr.contains("also serving the real") {
            // The venv from scripts/test has the real MiniLM: pulled by catalog name, it must be ready.
            #expect(output.stderr.contains("all-minilm-l6-v2: ready"))
            #expect(output.stderr.contains("all-minilm-l6-v2 embedded in-process"))
            // The pulled model answers `embed --local` in-process, with no server.
            let similar = try await CLIRunner.run([
                "embed", "--local", "all-minilm-l6-v2", "--cache-dir", cache, "--similarity", "A cat sits on the mat.",
                "A kitten is resting on a rug.",
            ])
            #expect(similar.status == 0, "\(similar.stderr)")
            #expect(similar.stderr.contains("in-process BERT encoder, 384 dimensions"))
            let value = try #require(Double(similar.lastLine ?? ""))
            #expect(value > 0.5 && value <= 1)
            // The system BLAS (when installed; scripts/test installs OpenBLAS) gives the vectors portable Swift
            // gives. Both run in child processes, so a crash inside the library cannot take the tests down.
            let texts = ["Hello world", "A man is playing a guitar on stage."]
            let automatic = try await CLIRunner.run(
                ["embed", "--local", "all-minilm-l6-v2", "--cache-dir", cache, "--json"] + texts)
            let portable = try await CLIRunner.run(
                ["embed", "--local", "all-minilm-l6-v2", "--cache-dir", cache, "--json"] + texts,
                environment: ["MODELDEPOT_BLAS": "off"])
            #expect(automatic.status == 0 && portable.status == 0, "\(automatic.stderr) \(portable.stderr)")
            #expect(portable.stderr.contains("arithmetic: portable Swift"))
            if FileManager.default.fileExists(atPath: "/usr/lib/x86_64-linux-gnu/libopenblas.so.0") {
                #expect(automatic.stderr.contains("arithmetic: BLAS (libopenblas.so.0"), "\(automatic.stderr)")
                // On a processor with AVX2, OpenBLAS runs kernels that use it, not the SSE3 ones an OpenBLAS older
                // than the processor falls back to.
                let flags = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
                if flags.contains(" avx2 ") {
                    #expect(!automatic.stderr.contains("Prescott"), "\(automatic.stderr)")
                    #expect(automatic.stderr.contains(" kernels)"), "\(automatic.stderr)")
                }
            }
            func vectors(_ output: String) throws -> [[Double]] {
                let objects = try #require(
                    try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [[String: Any]])
                return try objects.map { try #require($0["vector"] as? [Double]) }
            }
            // A batch file: arguments first, then the file's non-empty lines, one vector each.
            let file = folder.path("texts.txt")
            try Data("first line\n\nsecond line\n".utf8).write(to: file)
            let fromFile = try await CLIRunner.run(
                [
                    "embed", "--local", "all-minilm-l6-v2", "--cache-dir", cache, "--json", "--batch-file", file.path,
                    "zero",
                ])
            #expect(fromFile.status == 0, "\(fromFile.stderr)")
            #expect(try vectors(fromFile.stdout).count == 3)
            for (fast, slow) in zip(try vectors(automatic.stdout), try vectors(portable.stdout)) {
                let dot = zip(fast, slow).map(*).reduce(0, +)
                let norms = (fast.map { $0 * $0 }.reduce(0, +) * slow.map { $0 * $0 }.reduce(0, +)).squareRoot()
                #expect(dot / norms >= 0.9999)
            }
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: snapshot + "/model.safetensors")).count == 4 << 20)
        // The result is a normal cache: `ls` sees the model.
        let list = try await CLIRunner.run(["ls", "--cache-dir", cache])
        #expect(list.stdout.contains("demo/tiny-chat"))
    }
}
