import Foundation
import ModelDepot
import ModelDepotInference
import ModelDepotTesting
import Testing

/// Base URLs, credentials, redirects, non-streamed errors and the cloud/local selector.
@Suite struct ProviderSetupTests {
    @Test func aBaseURLWithoutAPathGetsV1AndOthersAreKept() throws {
        func base(_ text: String) throws -> String {
            try OpenAICompatibleProvider(baseURL: URL(string: text)!).baseURL.absoluteString
        }
        #expect(try base("http://127.0.0.1:8080") == "http://127.0.0.1:8080/v1")
        #expect(try base("http://127.0.0.1:8080/") == "http://127.0.0.1:8080/v1")
        #expect(try base("http://127.0.0.1:8080/v1/") == "http://127.0.0.1:8080/v1")
        #expect(try base("https://router.huggingface.co/v1") == "https://router.huggingface.co/v1")
        #expect(try base("http://host/api/openai/v1?x=1") == "http://host/api/openai/v1")
        #expect(throws: ModelDepotError.self) { try OpenAICompatibleProvider(baseURL: URL(string: "ftp://host/v1")!) }
        #expect(throws: ModelDepotError.self) { try OpenAICompatibleProvider(baseURL: URL(string: "/v1")!) }
    }

    @Test func huggingFaceHostsGetTheHubTokenAndOthersOnlyAnExplicitKey() {
        let environment = HubEnvironment(variables: ["HF_TOKEN": "hf_secret", "HF_ENDPOINT": "http://mirror:8080"])
        func credentials(_ url: String, key: String? = nil) -> InferenceCredentials {
            InferenceCredentials.resolve(for: URL(string: url)!, apiKey: key, environment: environment)
        }
        #expect(credentials("https://router.huggingface.co/v1") == .huggingFaceToken("hf_secret"))
        // Dedicated endpoints and Spaces run anyone's code; plain http is read by anyone on the path: neither gets
        // the token unless it is given as --api-key.
        #expect(credentials("https://x.us-east-1.aws.endpoints.huggingface.cloud/v1") == InferenceCredentials.none)
        #expect(credentials("https://someone-evil.hf.space/v1") == InferenceCredentials.none)
        #expect(credentials("https://evil.huggingface.co/v1") == InferenceCredentials.none)
        #expect(credentials("http://router.huggingface.co/v1") == InferenceCredentials.none)
        #expect(credentials("http://mirror:8080/v1") == InferenceCredentials.none)
        #expect(credentials("https://huggingface.co/api/inference-proxy/v1") == .huggingFaceToken("hf_secret"))
        #expect(credentials("https://someone-evil.hf.space/v1", key: "hf_secret") == .apiKey("hf_secret"))
        func configured(_ endpoint: String, _ url: String) -> InferenceCredentials {
            InferenceCredentials.resolve(
                for: URL(string: url)!, apiKey: nil,
                environment: HubEnvironment(variables: ["HF_TOKEN": "hf_secret", "HF_ENDPOINT": endpoint]))
        }
        #expect(configured("https://hub.internal", "https://hub.internal/v1") == .huggingFaceToken("hf_secret"))
        #expect(configured("http://127.0.0.1:9000", "http://127.0.0.1:9000/v1") == .huggingFaceToken("hf_secret"))
        #expect(configured("http://127.0.0.1:9000", "http://127.0.0.1:9001/v1") == InferenceCredentials.none)
        #expect(credentials("http://127.0.0.1:8080/v1") == InferenceCredentials.none)
        #expect(credentials("https://evilhuggingface.co/v1") == InferenceCredentials.none)
        #expect(credentials("http://127.0.0.1:8080/v1", key: "sk-1") == .apiKey("sk-1"))
        #expect(credentials("https://router.huggingface.co/v1", key: "sk-1") == .apiKey("sk-1"))
        let disabled = HubEnvironment(variables: ["HF_TOKEN": "hf_secret", "HF_HUB_DISABLE_IMPLICIT_TOKEN": "1"])
        #expect(
            InferenceCredentials.resolve(
                for: URL(string: "https://router.huggingface.co/v1")!, apiKey: nil, environment: disabled) == .none)
    }

    @Test func redirectsAreNotFollowedSoTheKeyStaysHome() async throws {
        let elsewhere = try await ScriptedHTTPServer.start()
        let server = try await ScriptedHTTPServer.start(replies: [
            ScriptedHTTPServer.Reply(
                status: 307,
                headers: [
                    ("Location", elsewhere.baseURL.absoluteString + "/v1/chat/completions"),
                    ("Content-Length", "0"),
                ], steps: [])
        ])
        let provider = try scriptedProvider(server, credentials: .apiKey("sk-secret"))
        let (_, error) = await drain(provider.stream("hi"))
        #expect(error?.code == .invalidRequest)
        #expect(error?.message.contains("not followed") == true)
        #expect(elsewhere.requests.isEmpty)
        try await server.shutdown()
        try await elsewhere.shutdown()
    }

    @Test func nonStreamedErrorsAreClassified() async throws {
        let server = try await ScriptedHTTPServer.start(replies: [
            .json(
                #"{"error":{"message":"This model's maximum context length is 2048 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}"#,
                status: 400),
            .json(#"{"detail":[{"loc":["body","messages"],"msg":"field required","type":"missing"}]}"#, status: 422),
            .json(#"{"error":"Model not found"}"#, status: 404),
            .json(#"{"detail":"Invalid API key"}"#, status: 401),
            .json("{}", status: 500), .json("{}", status: 502),
        ])
        let provider = try scriptedProvider(server, attempts: 2)
        func code() async -> ModelDepotError.Code? {
            do {
                _ = try await provider.generate("hi")
                return nil
            } catch {
                return (error as? ModelDepotError)?.code
            }
        }
        #expect(await code() == .contextLengthExceeded)
        #expect(await code() == .invalidRequest)
        #expect(await code() == .notFound)
        #expect(await code() == .unauthorized)
        #expect(await code() == .serverError)  // 500, then 502 on the one retry
        #expect(server.requests.count == 6)
        try await server.shutdown()
    }

    @Test func aReplyThatIgnoresStreamingStillArrivesAsChunks() async throws {
        let server = try await ScriptedHTTPServer.start(replies: [
            .json(
                #"{"choices":[{"message":{"role":"assistant","content":"all at once"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":3}}"#
            )
        ])
        let generation = try await scriptedProvider(server).stream("hi").collect()
        #expect(generation.text == "all at once")
        #expect(generation.finishReason == .stop)
        #expect(generation.tokenCount == 3)
        try await server.shutdown()
    }

    @Test func embeddingsComeBackInInputOrder() async throws {
        let server = try await ScriptedHTTPServer.start(replies: [
            .json(#"{"data":[{"index":1,"embedding":[0,1]},{"index":0,"embedding":[1,0]}]}"#),
            .json(#"{"data":[{"index":0,"embedding":[1,0]}]}"#),
        ])
        let provider = try scriptedProvider(server)
        #expect(try await provider.embed(["first", "second"]) == [[1, 0], [0, 1]])
        await #expect(throws: ModelDepotError.self) { try await provider.embed(["one", "two"]) }
        #expect(cosineSimilarity([1, 0], [0, 1]) == 0)
        #expect(cosineSimilarity([1, 2], [2, 4]).map { abs($0 - 1) < 1e-12 } == true)
        #expect(cosineSimilarity([1], [1, 2]) == nil)
        #expect(cosineSimilarity([0, 0], [1, 2]) == nil)
        try await server.shutdown()
    }

    @Test func configPresetsAndModifiersAndTheirLimits() {
        let config = GenerationConfig.creative.temperature(0.5).topP(0.8).maxTokens(10).seed(3)
        #expect(config.temperature == 0.5 && config.topP == 0.8 && config.maxTokens == 10 && config.seed == 3)
        #expect(config.presencePenalty == GenerationConfig.creative.presencePenalty)
        #expect(GenerationConfig.precise.temperature! < GenerationConfig.creative.temperature!)
        #expect(GenerationConfig.default.temperature(3).problem?.contains("temperature") == true)
        #expect(GenerationConfig.default.maxTokens(0).problem != nil)
        #expect(GenerationConfig.default.stopSequences(["a", "b", "c", "d", "e"]).problem != nil)
        #expect(GenerationConfig.code.problem == nil)
    }

    @Test func theSelectorSaysWhatEachModeLacks() async throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-selector")
        defer { folder.remove() }
        let environment = HubEnvironment(variables: [
            "HF_HUB_CACHE": folder.path("cache").path, "HF_HOME": folder.path("home").path,
        ])
        let manager = try ModelManager(configuration: .init(environment: environment))
        let catalog = try ModelCatalog(models: [LlamaPeer.entry])
        let server = try await ScriptedHTTPServer.start(replies: [
            .json(#"{"detail":"Invalid API key"}"#, status: 401), .json(#"{"data":[{"id":"tiny"}]}"#),
        ])
        let selector = InferenceSelector(
            environment: environment, manager: manager, catalog: catalog,
            transport: OpenAICompatibleProvider.sharedTransport, findRuntime: { nil })

        // Cloud: Hugging Face needs a token (checked without a request); elsewhere the server must answer.
        let noToken = await selector.cloudAvailability(baseURL: URL(string: "https://router.huggingface.co/v1")!)
        #expect(
            noToken
                == .unavailable(
                    reason:
                        "No Hugging Face token: set HF_TOKEN (or log in with `hf auth login`) to use router.huggingface.co."
                ))
        let refused = await selector.cloudAvailability(baseURL: server.baseURL, apiKey: "wrong")
        guard case .unavailable(let reason) = refused else {
            throw ModelDepotError(.invalidArgument, "expected unavailable")
        }
        #expect(reason.contains("Invalid API key"))
        #expect(await selector.cloudAvailability(baseURL: server.baseURL, apiKey: "right") == .available)

        // Local: the model must be pulled; unknown names and non-GGUF formats say so.
        guard case .unavailable(let missing) = selector.localAvailability(model: "tiny-chat") else {
            throw ModelDepotError(.invalidArgument, "expected unavailable")
        }
        #expect(missing.contains("modeldepot pull tiny-chat"))
        guard case .unavailable(let unknown) = selector.localAvailability(model: "nope") else {
            throw ModelDepotError(.invalidArgument, "expected unavailable")
        }
        #expect(unknown.contains("not in the model catalog"))

        let choice = await selector.select(
            [.local, .cloud], cloudURL: URL(string: "https://router.huggingface.co/v1")!, localModel: "tiny-chat")
        guard case .failure(let error) = choice else { throw ModelDepotError(.invalidArgument, "expected failure") }
        #expect(error.code == .unavailable)
        #expect(error.message.contains("local:") && error.message.contains("cloud:"))
        try await server.shutdown()
    }
}
