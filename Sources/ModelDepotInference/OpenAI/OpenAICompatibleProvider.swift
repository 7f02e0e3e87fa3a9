import Foundation
import ModelDepot

/// An ``InferenceProvider`` for any server that speaks the OpenAI HTTP API: llama.cpp's server, vLLM,
/// LM Studio, Ollama's `/v1`, Hugging Face's router, OpenAI itself.
///
/// The base URL is what OpenAI SDKs take, usually ending in `/v1` (`http://127.0.0.1:8080/v1`,
/// `https://router.huggingface.co/v1`); a URL with no path gets `/v1`. Requests that fail before any text
/// arrives (connection refused or reset, 5xx, 429 — waiting out `Retry-After`) are retried with backoff on
/// the injected clock; once text has arrived a failure ends the stream, because a retry would produce a
/// different reply.
public struct OpenAICompatibleProvider: InferenceProvider {
    /// The API root, e.g. `http://127.0.0.1:8080/v1`, without a trailing `/`.
    public let baseURL: URL
    /// The model requests ask for unless their config names one; nil leaves it to the server.
    public let model: String?
    public let credentials: InferenceCredentials
    let transport: any HTTPTransport
    let clock: any Clock<Duration>
    let retryPolicy: RetryPolicy
    let random: @Sendable () -> Double

    /// Replies larger than this (non-streamed) are refused.
    static let maximumResponseBytes = 64 << 20

    /// A transport with a long read timeout (a model on a CPU can think for minutes before its first token on a
    /// long prompt), through the environment's proxies and with its certificate authorities, as every outbound
    /// request: for servers someone gave by URL.
    package static let sharedTransport = AsyncHTTPTransport.fromEnvironment(configuration: longReads)

    /// The same, always direct: for a runtime this process started on loopback, which nothing stands between.
    package static let localTransport = AsyncHTTPTransport(configuration: longReads)

    private static var longReads: AsyncHTTPTransport.Configuration {
        var configuration = AsyncHTTPTransport.Configuration()
        configuration.readTimeout = .seconds(600)
        return configuration
    }

    /// A client for the OpenAI-compatible API at `baseURL` (`…/v1`), through the environment's proxies.
    public init(
        baseURL: URL, model: String? = nil, credentials: InferenceCredentials = .none,
        retryPolicy: RetryPolicy = RetryPolicy(
            maxAttempts: 3, baseDelay: .milliseconds(500), maxRetryAfter: .seconds(60))
    ) throws {
        try self.init(
            baseURL: baseURL, model: model, credentials: credentials, transport: Self.sharedTransport,
            retryPolicy: retryPolicy)
    }

    /// The same over `transport`, with the clock and jitter given.
    package init(
        baseURL: URL, model: String? = nil, credentials: InferenceCredentials = .none,
        transport: any HTTPTransport,
        clock: any Clock<Duration> = ContinuousClock(),
        retryPolicy: RetryPolicy = RetryPolicy(
            maxAttempts: 3, baseDelay: .milliseconds(500), maxRetryAfter: .seconds(60)),
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) throws {
        guard let scheme = baseURL.scheme?.lowercased(), ["http", "https"].contains(scheme), baseURL.host != nil,
            var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: true)
        else {
            throw ModelDepotError(
                .invalidURL,
                "'\(baseURL.absoluteString)' is not an http(s) URL; pass one like http://127.0.0.1:8080/v1.")
        }
        while components.path.hasSuffix("/") { components.path.removeLast() }
        if components.path.isEmpty { components.path = "/v1" }
        components.query = nil
        components.fragment = nil
        self.baseURL = components.url ?? baseURL
        self.model = model
        self.credentials = credentials
        self.transport = transport
        self.clock = clock
        self.retryPolicy = retryPolicy
        self.random = random
    }

    /// The ids of the models the server offers (`GET /models`).
    public func models() async throws -> [String] {
        let body = try await withRetries { try await call("GET", "models", body: nil) }
        return try decode(OpenAIWireFormat.ModelList.self, from: body, what: "its model list").data.map(\.id)
    }

    public func generate(messages: [ChatMessage], config: GenerationConfig) async throws -> Generation {
        let started = ContinuousClock.now
        let request = try chatRequest(messages: messages, config: config, stream: false)
        let body = try await withRetries { try await call("POST", "chat/completions", body: request) }
        let reply = try decode(OpenAIWireFormat.ChatResponse.self, from: body, what: "a reply")
        guard let choice = reply.choices.first else {
            throw ModelDepotError(.protocolViolation, "\(baseURL.absoluteString) sent a reply with no choices.")
        }
        let text = choice.message?.content ?? ""
        return Generation(
            text: text, finishReason: choice.finishReason.map(FinishReason.init(rawValue:)), usage: reply.usage,
            tokenCount: reply.usage?.completionTokens ?? 0, timeToFirstToken: nil,
            duration: ContinuousClock.now - started, tokensPerSecond: nil)
    }

    public func stream(messages: [ChatMessage], config: GenerationConfig) -> GenerationStream {
        let request = Result { try chatRequest(messages: messages, config: config, stream: true) }
        return GenerationStream {
            let session = ChatStreamSession(provider: self, request: request)
            return { try await session.next() }
        }
    }

    public func embed(_ texts: [String]) async throws -> [[Float]] {
        guard !texts.isEmpty else { return [] }
        let request = try encode(OpenAIWireFormat.EmbeddingRequest(model: model, input: texts))
        let body = try await withRetries { try await call("POST", "embeddings", body: request) }
        let reply = try decode(OpenAIWireFormat.EmbeddingResponse.self, from: body, what: "embeddings")
        guard reply.data.count == texts.count else {
            throw ModelDepotError(
                .protocolViolation,
                "\(baseURL.absoluteString) sent \(reply.data.count) embeddings for \(texts.count) texts. If it is llama.cpp, start it with a pooling type (--pooling mean) so each text gets one vector."
            )
        }
        let ordered = reply.data.enumerated().sorted {
            ($0.element.index ?? $0.offset) < ($1.element.index ?? $1.offset)
        }
        return ordered.map(\.element.embedding)
    }

    // MARK: - Requests

    func chatRequest(messages: [ChatMessage], config: GenerationConfig, stream: Bool) throws -> [UInt8] {
        if let problem = config.problem {
            throw ModelDepotError(.invalidArgument, "Invalid generation settings: \(problem).")
        }
        guard !messages.isEmpty else {
            throw ModelDepotError(.invalidArgument, "A chat request needs at least one message.")
        }
        return try encode(
            OpenAIWireFormat.ChatRequest(
                model: config.model ?? model, messages: messages, config: config, stream: stream))
    }

    func url(_ route: String) -> URL { baseURL.appendingPathComponent(route) }

    /// Sends one request and returns the response once its head arrived, if it is a success; every failure is
    /// a ``ModelDepotError`` (non-2xx answers are read and classified).
    func send(
        _ method: String, _ route: String, body: [UInt8]?, contentType: String = "application/json",
        accept: String = "application/json"
    ) async throws -> TransportResponse {
        let target = url(route)
        var headers: [(name: String, value: String)] = [
            ("Accept", accept), ("User-Agent", "modeldepot/0.1"), ("Accept-Encoding", "identity"),
        ]
        if body != nil { headers.append(("Content-Type", contentType)) }
        if let token = credentials.bearerToken { headers.append(("Authorization", "Bearer \(token)")) }
        let response: TransportResponse
        do {
            response = try await transport.send(
                TransportRequest(method: method, url: target, headers: headers, body: body))
        } catch {
            throw Self.transportError(error, url: target)
        }
        if (200..<300).contains(response.status) { return response }
        if (300..<400).contains(response.status) {
            throw ModelDepotError(
                .invalidRequest,
                "\(target.absoluteString) redirected to \(response.header("Location") ?? "another URL"); redirects are not followed, so credentials stay with the base URL. Use the final URL as the base URL."
            )
        }
        let errorBody = (try? await Self.collect(response.body, limit: 1 << 20, url: target)) ?? []
        throw InferenceErrorMapping.error(
            status: response.status, retryAfter: response.retryAfter, body: errorBody, url: target)
    }

    /// A request whose whole body is returned.
    func call(_ method: String, _ route: String, body: [UInt8]?, contentType: String = "application/json")
        async throws -> [UInt8]
    {
        let response = try await send(method, route, body: body, contentType: contentType)
        return try HTTPExchange.decodedBody(
            try await Self.collect(response.body, limit: Self.maximumResponseBytes, url: url(route)),
            contentEncoding: response.header("Content-Encoding"), from: url(route))
    }

    /// Runs `operation` again after transient failures (network, 5xx, 429), waiting with backoff on the clock.
    func withRetries<T>(_ operation: () async throws -> T) async throws -> T {
        try await retryPolicy.retrying(clock: clock, random: random, operation)
    }

    /// Sleeps before attempt `attempt + 1`, or rethrows `error` when it is not worth another attempt.
    func backOff(after error: ModelDepotError, attempt: Int) async throws {
        try await retryPolicy.backOff(after: error, attempt: attempt, clock: clock, random: random())
    }

    static func transportError(_ error: any Error, url: URL) -> ModelDepotError {
        if let error = error as? ModelDepotError { return error }
        if error is CancellationError || Task.isCancelled { return cancelled() }
        return ModelDepotError(
            .network,
            "Cannot reach \(url.host ?? url.absoluteString): \(error). Check that the server is running and the URL.",
            underlying: error)
    }

    static func cancelled() -> ModelDepotError {
        ModelDepotError(.cancelled, "The request was cancelled.")
    }

    static func collect(_ body: TransportBody, limit: Int, url: URL) async throws -> [UInt8] {
        do {
            return try await body.collect(limit: limit, from: url)
        } catch {
            throw transportError(error, url: url)
        }
    }

    private func encode(_ value: some Encodable) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        return Array(try encoder.encode(value))
    }

    func decode<T: Decodable>(_ type: T.Type, from body: [UInt8], what: String) throws -> T {
        try JSONAnswer.decode(
            type, from: body, sender: baseURL.absoluteString, what: what,
            hint: "Check that it is an OpenAI-compatible API.")
    }
}
