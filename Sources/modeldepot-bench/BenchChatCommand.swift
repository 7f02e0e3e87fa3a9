import ArgumentParser
import Foundation
import ModelDepot
import ModelDepotInference

/// Measures what the streaming client costs: the same request read by `OpenAICompatibleProvider.stream` and
/// by a raw reader (the same HTTP transport, scanning bytes for content events), alternating, in one process.
/// Used by bench/inference.sh.
struct BenchChatCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chat", abstract: "Benchmark the streaming client against a raw reader.")

    @Option(help: "The OpenAI-compatible base URL.")
    var endpoint: String

    @Option(help: "Measured runs per reader.")
    var runs: Int = 20

    @Option(help: "Tokens per reply.")
    var maxTokens: Int = 200

    struct Sample {
        var timeToFirstToken: Double
        var tokensPerSecond: Double
        var tokens: Int
        /// CPU time of this whole process (every thread) during the run, per token, in microseconds.
        var cpuMicrosecondsPerToken: Double = 0
    }

    struct Report: Encodable {
        var readers: [Summary]
        /// The client's own cost: one recorded stream replayed from memory through the provider.
        var clientParsingMicrosecondsPerToken: Double
    }

    /// Replays one recorded reply to the provider from memory (one buffer per event, as servers send them)
    /// and returns its CPU time per token: the client's cost with no network and no server.
    private func parsingCost(url: URL, body: [UInt8], messages: [ChatMessage]) async throws -> Double {
        let response = try await OpenAICompatibleProvider.localTransport.send(
            TransportRequest(
                method: "POST", url: url, headers: [("Content-Type", "application/json")], body: body))
        var recorded: [UInt8] = []
        for try await chunk in response.body { recorded += chunk.bytes }
        var events: [BodyChunk] = []
        var start = 0
        for index in recorded.indices.dropFirst() where recorded[index] == 10 && recorded[index - 1] == 10 {
            events.append(BodyChunk(Array(recorded[start...index])))
            start = index + 1
        }
        let replay = ReplayTransport(events: events)
        let provider = try OpenAICompatibleProvider(
            baseURL: url.deletingLastPathComponent().deletingLastPathComponent(), transport: replay)
        let repeats = 200
        let before = Self.processCPUSeconds()
        var tokens = 0
        for _ in 0..<repeats {
            for try await chunk in provider.stream(messages: messages, config: .default) where !chunk.text.isEmpty {
                tokens += 1
            }
        }
        return (Self.processCPUSeconds() - before) * 1e6 / Double(max(1, tokens))
    }

    struct ReplayTransport: HTTPTransport {
        let events: [BodyChunk]
        func send(_ request: TransportRequest) async throws -> TransportResponse {
            let (stream, continuation) = AsyncStream<BodyChunk>.makeStream()
            for event in events { continuation.yield(event) }
            continuation.finish()
            return TransportResponse(
                status: 200, headers: [("Content-Type", "text/event-stream")], body: TransportBody(stream))
        }
    }

    struct Summary: Encodable {
        var reader: String
        var runs: Int
        var tokens: Int
        var medianTimeToFirstTokenMs: Double
        var medianTokensPerSecond: Double
        var medianCPUMicrosecondsPerToken: Double
    }

    func run() async throws {
        guard let url = URL(string: endpoint) else { throw ValidationError("--endpoint is not a URL") }
        let provider = try OpenAICompatibleProvider(baseURL: url)
        let config = GenerationConfig(temperature: 0, maxTokens: maxTokens, seed: 1)
        let messages: [ChatMessage] = [.user("Tell me about the model cache")]
        let body = try JSONSerialization.data(withJSONObject: [
            "messages": [["role": "user", "content": "Tell me about the model cache"]], "max_tokens": maxTokens,
            "temperature": 0, "seed": 1, "stream": true, "stream_options": ["include_usage": true],
        ])
        var client: [Sample] = []
        var raw: [Sample] = []
        // One warm-up of each, then alternate so drift in the server's speed hits both readers alike.
        _ = try await measureClient(provider, messages, config)
        _ = try await measureRaw(url: provider.baseURL.appendingPathComponent("chat/completions"), body: Array(body))
        for _ in 0..<runs {
            client.append(try await withCPUTime { try await measureClient(provider, messages, config) })
            raw.append(
                try await withCPUTime {
                    try await measureRaw(
                        url: provider.baseURL.appendingPathComponent("chat/completions"), body: Array(body))
                })
        }
        let parsing = try await parsingCost(
            url: provider.baseURL.appendingPathComponent("chat/completions"), body: Array(body), messages: messages)
        printJSON(
            Report(
                readers: [summary("client", client), summary("raw", raw)], clientParsingMicrosecondsPerToken: parsing))
    }

    private func withCPUTime(_ measure: () async throws -> Sample) async throws -> Sample {
        let before = Self.processCPUSeconds()
        var sample = try await measure()
        sample.cpuMicrosecondsPerToken = (Self.processCPUSeconds() - before) * 1e6 / Double(max(1, sample.tokens))
        return sample
    }

    private static func processCPUSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    private func summary(_ name: String, _ samples: [Sample]) -> Summary {
        func median(_ values: [Double]) -> Double {
            let sorted = values.sorted()
            return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
        }
        return Summary(
            reader: name, runs: samples.count, tokens: samples.first?.tokens ?? 0,
            medianTimeToFirstTokenMs: median(samples.map(\.timeToFirstToken)) * 1000,
            medianTokensPerSecond: median(samples.map(\.tokensPerSecond)),
            medianCPUMicrosecondsPerToken: median(samples.map(\.cpuMicrosecondsPerToken)))
    }

    /// Times taken where the caller sees the text: the first and the last content chunk.
    private func measureClient(
        _ provider: OpenAICompatibleProvider, _ messages: [ChatMessage], _ config: GenerationConfig
    ) async throws -> Sample {
        let start = ContinuousClock.now
        var first: ContinuousClock.Instant?
        var last = start
        var tokens = 0
        for try await chunk in provider.stream(messages: messages, config: config) where !chunk.text.isEmpty {
            let now = ContinuousClock.now
            if first == nil { first = now }
            last = now
            tokens += 1
        }
        return sample(start: start, first: first, last: last, tokens: tokens)
    }

    /// The same request read as bytes: a content event is counted where `"content":` appears in a buffer.
    private func measureRaw(url: URL, body: [UInt8]) async throws -> Sample {
        let marker = Array(#""content":"#.utf8)
        let start = ContinuousClock.now
        let response = try await OpenAICompatibleProvider.localTransport.send(
            TransportRequest(
                method: "POST", url: url,
                // The headers the provider sends, so the server treats both requests alike.
                headers: [
                    ("Accept", "text/event-stream"), ("User-Agent", "modeldepot/0.1"), ("Accept-Encoding", "identity"),
                    ("Content-Type", "application/json"),
                ], body: body))
        var first: ContinuousClock.Instant?
        var last = start
        var tokens = 0
        for try await chunk in response.body {
            let count = chunk.withUnsafeBytes { occurrences(of: marker, in: $0) }
            guard count > 0 else { continue }
            let now = ContinuousClock.now
            if first == nil { first = now }
            last = now
            tokens += count
        }
        return sample(start: start, first: first, last: last, tokens: tokens)
    }

    private func occurrences(of marker: [UInt8], in bytes: UnsafeRawBufferPointer) -> Int {
        var count = 0
        var index = bytes.startIndex
        while let found = bytes[index...].firstIndex(of: marker[0]) {
            if bytes[found...].starts(with: marker) { count += 1 }
            index = bytes.index(after: found)
        }
        return count
    }

    private func sample(
        start: ContinuousClock.Instant, first: ContinuousClock.Instant?, last: ContinuousClock.Instant, tokens: Int
    )
        -> Sample
    {
        let firstToken = first ?? last
        let decoding = (last - firstToken).milliseconds / 1000
        return Sample(
            timeToFirstToken: (firstToken - start).milliseconds / 1000,
            tokensPerSecond: decoding > 0 ? Double(tokens - 1) / decoding : 0, tokens: tokens)
    }
}
