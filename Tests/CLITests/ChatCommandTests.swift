import Foundation
import Logging
import ModelDepot
import ModelDepotServer
import ModelDepotTesting
import Testing

/// `modeldepot chat` and `embed` as users run them.
@Suite struct ChatCommandTests {
    static func event(_ text: String) -> String {
        #"data: {"choices":[{"index":0,"delta":{"content":"\#(text)"},"finish_reason":null}]}"# + "\n\n"
    }
    static let end = #"data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"# + "\n\ndata: [DONE]\n\n"

    @Test func oneReplyStreamsToStdoutWithItsMeasurementsOnStderr() async throws {
        let server = try await ScriptedHTTPServer.start(replies: [
            .eventStream([.send(Self.event("Hello")), .send(Self.event(", you")), .send(Self.end)])
        ])
        defer { Task { try await server.shutdown() } }
        let result = try await CLIRunner.run(
            [
                "chat", "--endpoint", server.baseURL.absoluteString + "/v1", "--prompt", "hi", "--system", "be brief",
                "--max-tokens", "9",
            ],
            environment: ["MODELDEPOT_API_KEY": "key-1"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "Hello, you\n")
        #expect(result.stderr.contains("2 tokens") && result.stderr.contains("finish: stop"))
        let request = try #require(server.requests.first)
        #expect(request.header("Authorization") == "Bearer key-1")
        let body = try #require(try JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any])
        #expect(body["max_tokens"] as? Int == 9)
        #expect((body["messages"] as? [[String: String]])?.first == ["role": "system", "content": "be brief"])
    }

    @Test func ctrlCStopsAReplyButNotTheChat() async throws {
        let server = try await ScriptedHTTPServer.start(replies: [
            .eventStream([.send(Self.event("first")), .hang]),
            .eventStream([.send(Self.event("second")), .send(Self.end)]),
        ])
        defer { Task { try await server.shutdown() } }
        let input = Pipe()
        let (process, out, err) = try CLIRunner.start(
            ["chat", "--endpoint", server.baseURL.absoluteString + "/v1"], input: input)
        input.fileHandleForWriting.write(Data("tell me everything\n".utf8))
        // The reply hangs after its first token; once it is printed, Ctrl-C must stop the reply (closing the
        // connection) and keep the chat.
        let printed = await CLIRunner.read(out, until: "first")
        kill(process.processIdentifier, SIGINT)
        try await withTimeLimit { await server.waitForClosedConnections(1) }
        input.fileHandleForWriting.write(Data("and then?\n/exit\n".utf8))
        let result = await CLIRunner.wait(process, out, err)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(printed.contains("first") && result.stdout.contains("second"))
        #expect(result.stderr.contains("[stopped]"))
        // The stopped reply stays in the conversation the model sees next.
        let second = try #require(server.requests.last)
        let body = try #require(try JSONSerialization.jsonObject(with: Data(second.body)) as? [String: Any])
        let messages = try #require(body["messages"] as? [[String: String]])
        #expect(
            messages == [
                ["role": "user", "content": "tell me everything"], ["role": "assistant", "content": "first"],
                ["role": "user", "content": "and then?"],
            ])
    }

    @Test func badInputGetsClearErrors() async throws {
        let neither = try await CLIRunner.run(["chat", "--prompt", "x"])
        #expect(neither.status != 0 && neither.stderr.contains("--endpoint URL") && neither.stderr.contains("--local"))
        let both = try await CLIRunner.run(["embed", "--endpoint", "http://127.0.0.1:9/v1", "--local", "x", "a"])
        #expect(both.status != 0 && both.stderr.contains("exactly one"))
        let threeTexts = try await CLIRunner.run(["embed", "--endpoint", "http://x/v1", "--similarity", "a", "b", "c"])
        #expect(threeTexts.status != 0 && threeTexts.stderr.contains("exactly two"))
        let badPreset = try await CLIRunner.run([
            "chat", "--endpoint", "http://x/v1", "--preset", "wild", "--prompt", "x",
        ])
        #expect(badPreset.status == 1 && badPreset.stderr.contains("not a preset"))
        let hot = try await CLIRunner.run(["chat", "--endpoint", "http://x/v1", "--temperature", "5", "--prompt", "x"])
        #expect(hot.status == 1 && hot.stderr.contains("temperature must be between 0 and 2"))
        let folder = try TemporaryDirectory(prefix: "modeldepot-chat")
        defer { folder.remove() }
        let notPulled = try await CLIRunner.run([
            "chat", "--local", "qwen2.5-0.5b-instruct-q4", "--cache-dir", folder.url.path, "--prompt", "x",
        ])
        #expect(notPulled.status == 1 && notPulled.stderr.contains("modeldepot pull qwen2.5-0.5b-instruct-q4"))
        let notGGUF = try await CLIRunner.run([
            "chat", "--local", "all-minilm-l6-v2", "--cache-dir", folder.url.path, "--prompt", "x",
        ])
        #expect(notGGUF.status == 1 && notGGUF.stderr.contains("GGUF"))
    }
}

/// `chat --local` and `embed --local` with the real llama.cpp server (llama-cpp-python in ./.venv) serving a
/// tiny model the test writes, publishes on a mirror and pulls by its catalog name.
@Suite(.enabled(if: PythonVenv.hasLlamaServer, "llama-cpp-python is not in ./.venv (scripts/test installs it)"))
struct ChatLocalModelTests {
    static let python = PythonVenv.python
    static let packageRoot = PythonVenv.packageRoot

    @Test func chatAndEmbedWithAPulledCatalogModel() async throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-chat-local")
        defer { folder.remove() }
        let common = try await Self.pullTinyChat(into: folder)
        let environment = ["MODELDEPOT_PYTHON": Self.python.path]
        let chat = try await CLIRunner.run(
            ["chat", "--local", "tiny-chat", "--prompt", "hello", "--max-tokens", "6", "--temperature", "0", "--json"]
                + common, environment: environment)
        #expect(chat.status == 0, "\(chat.stderr)")
        let reply = try #require(try JSONSerialization.jsonObject(with: Data(chat.stdout.utf8)) as? [String: Any])
        #expect(reply["tokens"] as? Int == 6)
        #expect(reply["finishReason"] as? String == "length")
        #expect((reply["text"] as? String)?.isEmpty == false)

        let same = try await CLIRunner.run(
            ["embed", "--local", "tiny-chat", "--similarity", "the cat", "the cat"] + common, environment: environment)
        #expect(same.status == 0, "\(same.stderr)")
        #expect(same.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "1.000000")
    }
}

extension ChatLocalModelTests {
    /// Writes a tiny GGUF chat model with llama.cpp's writer, publishes it on our mirror as the catalog entry
    /// `tiny-chat`, pulls it by that name into `folder`'s cache, and returns the `--cache-dir` and `--catalog`
    /// arguments that find it.
    static func pullTinyChat(into folder: TemporaryDirectory) async throws -> [String] {
        let model = folder.path("repos/modeldepot/tiny-chat-GGUF/tiny-chat.gguf")
        try FileManager.default.createDirectory(
            at: model.deletingLastPathComponent(), withIntermediateDirectories: true)
        let writer = try CLIRunner.startProgram(
            Self.python,
            [Self.packageRoot.appendingPathComponent("Tests/PythonPeers/write_chat_model.py").path, model.path])
        try #require(await CLIRunner.wait(writer.0, writer.1, writer.2).status == 0)
        let catalog = folder.path("catalog.json")
        try Data(
            #"{"version":1,"models":[{"name":"tiny-chat","repo":"modeldepot/tiny-chat-GGUF","files":["tiny-chat.gguf"],"format":"gguf","capabilities":["textGeneration","embeddings"],"contextLength":2048,"sizeBytes":700000,"description":"tiny"}]}"#
                .utf8
        ).write(to: catalog)
        let (endpoint, serving) = try await FolderMirror.start(root: folder.path("repos"))
        defer { serving.cancel() }
        let common = ["--cache-dir", folder.path("cache").path, "--catalog", catalog.path]
        let pulled = try await CLIRunner.run(["pull", "tiny-chat", "--endpoint", endpoint.absoluteString] + common)
        try #require(pulled.status == 0, "\(pulled.stderr)")
        return common
    }
}

/// The venv `scripts/test` makes.
enum PythonVenv {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let python = packageRoot.appendingPathComponent(".venv/bin/python")
    static let hasLlamaServer =
        (try? FileManager.default.contentsOfDirectory(atPath: packageRoot.appendingPathComponent(".venv/lib").path))?
        .contains { version in
            FileManager.default.fileExists(
                atPath: packageRoot.appendingPathComponent(".venv/lib/\(version)/site-packages/llama_cpp/server").path)
        } ?? false
}
