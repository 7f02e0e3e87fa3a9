import Foundation
import ModelDepot

/// One iteration of a streamed chat reply: sends the request (retrying until text arrives), parses the event
/// stream and turns it into chunks with running measurements. Used by one consuming task only.
final class ChatStreamSession {
    private let provider: OpenAICompatibleProvider
    private let request: Result<[UInt8], any Error>
    private var body: TransportBody.AsyncIterator?
    private var parser = ServerSentEventParser()
    private let decoder = JSONDecoder()
    private var ready: [GenerationChunk] = []
    private var isFinished = false
    private var sawEvents = false
    private var attempts = 0

    private var started: ContinuousClock.Instant?
    private var firstToken: ContinuousClock.Instant?
    private var tokenCount = 0
    private var finishReason: FinishReason?
    private var usage: TokenUsage?

    init(provider: OpenAICompatibleProvider, request: Result<[UInt8], any Error>) {
        self.provider = provider
        self.request = request
    }

    private var route: URL { provider.url("chat/completions") }

    func next() async throws -> GenerationChunk? {
        while true {
            if !ready.isEmpty { return ready.removeFirst() }
            if isFinished { return nil }
            do {
                try await step()
            } catch let error as ModelDepotError {
                isFinished = true
                body = nil  // drops the connection if it is still open
                throw error
            }
        }
    }

    /// Opens the stream if needed, then reads and parses one buffer.
    private func step() async throws {
        if body == nil { try await open() }
        let chunk: BodyChunk?
        do {
            chunk = try await body?.next()
        } catch {
            let failure = OpenAICompatibleProvider.transportError(error, url: route)
            guard failure.code != .cancelled else { throw cancelled() }
            try await retryOrThrow(
                ModelDepotError(
                    .network,
                    "The connection to \(route.host ?? "the server") broke after \(tokenCount) tokens of the reply: \(error).",
                    underlying: error))
            return
        }
        guard let chunk else { return try endOfBody() }
        for event in try chunk.withUnsafeBytes({ try parser.parse($0) }) { try handle(event) }
    }

    private func open() async throws {
        let requestBody = try request.get()
        if started == nil { started = .now }
        while true {
            do {
                attempts += 1
                let response = try await provider.send(
                    "POST", "chat/completions", body: requestBody, accept: "text/event-stream")
                let contentType = response.header("Content-Type")?.lowercased() ?? ""
                if contentType.hasPrefix("application/json") {
                    // The server ignored `stream: true` and sent the whole reply at once.
                    try await takeWholeReply(response)
                    return
                }
                body = response.body.makeAsyncIterator()
                parser = ServerSentEventParser()
                sawEvents = false
                return
            } catch let error as ModelDepotError {
                try await provider.backOff(after: error, attempt: attempts)
            }
        }
    }

    /// A failure before any text: try the request again (with backoff); after text, end the stream.
    private func retryOrThrow(_ error: ModelDepotError) async throws {
        guard tokenCount == 0 else { throw error }
        try await provider.backOff(after: error, attempt: attempts)
        body = nil
    }

    private func endOfBody() throws {
        body = nil
        guard isFinished else {
            let what = sawEvents ? "after \(tokenCount) tokens" : "before sending anything"
            throw ModelDepotError(
                .incompleteStream,
                "The server ended the reply stream \(what), without its end marker, so the reply may be cut short. llama.cpp's server does this when the prompt plus the maximum reply length exceed its context: shorten the conversation or lower the maximum reply length."
            )
        }
    }

    private func handle(_ event: ServerSentEvent) throws {
        sawEvents = true
        guard !isFinished else { return }
        if event.data == "[DONE]" {
            finish()
            return
        }
        // The common chunk (a token, a finish reason) is read without JSONDecoder; anything else is decoded.
        if let fields = ChatChunkReader.read(Array(event.data.utf8)), !fields.needsFullDecode {
            if let text = fields.content, !text.isEmpty { emit(text) }
            if let reason = fields.finishReason { finishReason = FinishReason(rawValue: reason) }
            return
        }
        let data = Data(event.data.utf8)
        let chunk: OpenAIWireFormat.ChatChunk
        do {
            chunk = try decoder.decode(OpenAIWireFormat.ChatChunk.self, from: data)
        } catch {
            throw ModelDepotError(
                .protocolViolation,
                "\(route.host ?? "The server") sent a stream event that is not a chat chunk (\(event.data.prefix(200))): \(error).",
                underlying: error)
        }
        if chunk.error != nil, let json = try? JSONSerialization.jsonObject(with: data) {
            throw InferenceErrorMapping.streamError(json, url: route)
        }
        if let usage = chunk.usage { self.usage = usage }
        guard let choice = chunk.choices?.first else { return }
        if let text = choice.delta?.content, !text.isEmpty { emit(text) }
        if let reason = choice.finishReason { finishReason = FinishReason(rawValue: reason) }
    }

    private func emit(_ text: String) {
        let now = ContinuousClock.now
        if firstToken == nil { firstToken = now }
        tokenCount += 1
        ready.append(
            GenerationChunk(
                text: text, tokenCount: tokenCount, tokensPerSecond: speed(at: now),
                timeToFirstToken: timeToFirstToken, elapsed: elapsed(at: now)))
    }

    private func finish() {
        let now = ContinuousClock.now
        isFinished = true
        if let usage, usage.completionTokens > 0 { tokenCount = usage.completionTokens }
        ready.append(
            GenerationChunk(
                text: "", tokenCount: tokenCount, tokensPerSecond: speed(at: now),
                timeToFirstToken: timeToFirstToken, elapsed: elapsed(at: now), isComplete: true,
                finishReason: finishReason, usage: usage))
        body = nil
    }

    private func takeWholeReply(_ response: TransportResponse) async throws {
        let bytes = try await OpenAICompatibleProvider.collect(
            response.body, limit: OpenAICompatibleProvider.maximumResponseBytes, url: route)
        let reply = try provider.decode(OpenAIWireFormat.ChatResponse.self, from: bytes, what: "a reply")
        usage = reply.usage
        finishReason = reply.choices.first?.finishReason.map(FinishReason.init(rawValue:))
        if let text = reply.choices.first?.message?.content, !text.isEmpty { emit(text) }
        finish()
    }

    private var timeToFirstToken: Duration? {
        guard let started, let firstToken else { return nil }
        return firstToken - started
    }

    private func elapsed(at now: ContinuousClock.Instant) -> Duration { started.map { now - $0 } ?? .zero }

    private func speed(at now: ContinuousClock.Instant) -> Double? {
        guard let firstToken, tokenCount > 1 else { return nil }
        let seconds =
            Double((now - firstToken).components.attoseconds) / 1e18 + Double((now - firstToken).components.seconds)
        return seconds > 0 ? Double(tokenCount - 1) / seconds : nil
    }

    private func cancelled() -> ModelDepotError {
        ModelDepotError(
            .cancelled, "The reply was stopped after \(tokenCount) tokens; the text that arrived before is kept.")
    }
}
