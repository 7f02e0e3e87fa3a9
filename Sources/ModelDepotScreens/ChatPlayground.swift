import Foundation
import ModelDepot
import ModelDepotInference

/// The Chat playground: a conversation with a model behind any ``InferenceProvider`` (a llama.cpp server a
/// command started, an endpoint), streamed, with a system prompt, a generation preset and the reply's finish
/// reason and token usage in words. The conversation lives with the caller (the page): each request carries it.
public struct ChatPlayground: Sendable {
    /// What the page sends: the conversation so far, ending with the person's message.
    public struct Request: Sendable, Equatable, Decodable {
        public var messages: [ChatMessage]
        public var system: String?
        /// One of ``ChatPlayground/presets``' names.
        public var preset: String?
        public var maxTokens: Int?
        /// The model to talk to (a ``PlaygroundModels`` choice); nil: the page's default.
        public var model: String?

        public init(
            messages: [ChatMessage], system: String? = nil, preset: String? = nil, maxTokens: Int? = nil,
            model: String? = nil
        ) {
            self.messages = messages
            self.system = system
            self.preset = preset
            self.maxTokens = maxTokens
            self.model = model
        }
    }

    /// What the reply stream carries: text as it comes, then one summary.
    public enum Event: Sendable, Equatable {
        case text(String)
        case finished(Summary)
    }

    /// How a reply ended, in words for the page.
    public struct Summary: Sendable, Equatable, Encodable {
        /// `stop`, `length`, … as the server said; nil when it did not.
        public var finishReason: String?
        /// "Finished." / "Cut off at the token limit."
        public var finishText: String
        /// "12 prompt tokens, 30 in the reply · 25.3 tokens/s · first token after 120 ms".
        public var usageText: String
    }

    /// The presets, in the order the page offers them.
    public static let presets: [(name: String, config: GenerationConfig)] = [
        ("default", .default), ("precise", .precise), ("creative", .creative), ("code", .code),
    ]

    public let provider: any InferenceProvider
    /// Where replies come from, for the page ("http://127.0.0.1:8080/v1, model tiny-chat").
    public let source: String
    /// The use of a loaded model this playground holds (nil for an endpoint): each reply's stream keeps it until it
    /// ends, so the idle unload never stops a model mid-reply.
    public var use: RuntimeUse?

    public init(provider: any InferenceProvider, source: String) {
        self.provider = provider
        self.source = source
    }

    /// The settings a request asks for.
    ///
    /// - Throws: `invalidArgument` for an unknown preset, a token limit out of range, or a conversation that is
    ///   empty, does not end with the person's message, carries a system message, or is too long.
    public static func validated(_ request: Request) throws -> ([ChatMessage], GenerationConfig) {
        let name = request.preset ?? "default"
        guard var config = presets.first(where: { $0.name == name })?.config else {
            throw ModelDepotError(
                .invalidArgument,
                "'\(name)' is not a preset; use \(presets.map(\.name).joined(separator: ", ")).")
        }
        if let maxTokens = request.maxTokens {
            guard (1...8192).contains(maxTokens) else {
                throw ModelDepotError(.invalidArgument, "The token limit must be from 1 to 8192.")
            }
            config = config.maxTokens(maxTokens)
        }
        guard let last = request.messages.last, last.role == .user,
            !last.content.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty
        else { throw ModelDepotError(.invalidArgument, "Write a message first: the conversation ends with yours.") }
        guard !request.messages.contains(where: { $0.role == .system }) else {
            throw ModelDepotError(.invalidArgument, "Give the system prompt as `system`, not as a message.")
        }
        let characters = request.messages.reduce(request.system?.count ?? 0) { $0 + $1.content.count }
        guard request.messages.count <= 200, characters <= 200_000 else {
            throw ModelDepotError(
                .invalidArgument, "The conversation is too long for the playground (200 messages, 200,000 characters).")
        }
        let system = request.system?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        return ((system.isEmpty ? [] : [.system(system)]) + request.messages, config)
    }

    /// The reply to `request`, streamed. Ending the iteration early (the person pressed Stop and the page hung
    /// up) stops the generation and closes the connection to the model.
    public func reply(to request: Request) throws -> AsyncThrowingMapSequence<GenerationStream, [Event]> {
        let (messages, config) = try Self.validated(request)
        let use = use
        return provider.stream(messages: messages, config: config).map { chunk in
            withExtendedLifetime(use) {}
            var events: [Event] = chunk.text.isEmpty ? [] : [.text(chunk.text)]
            if chunk.isComplete { events.append(.finished(Self.summary(of: chunk))) }
            return events
        }
    }

    /// The words for a finished reply's last chunk.
    public static func summary(of chunk: GenerationChunk) -> Summary {
        let finish: String =
            switch chunk.finishReason {
            case .stop?: "Finished."
            case .length?: "Cut off at the token limit."
            case .contentFilter?: "Stopped by the server's content filter."
            case .toolCalls?: "The model asked to call a tool."
            case .other(let reason)?: "Ended (\(reason))."
            case nil: "Ended."
            }
        var parts: [String] = []
        if let usage = chunk.usage {
            parts.append("\(usage.promptTokens) prompt tokens, \(usage.completionTokens) in the reply")
        } else {
            parts.append(chunk.tokenCount == 1 ? "1 token" : "\(chunk.tokenCount) tokens")
        }
        if let speed = chunk.tokensPerSecond { parts.append(String(format: "%.1f tokens/s", speed)) }
        if let first = chunk.timeToFirstToken {
            parts.append("first token after \(Int((first / .milliseconds(1)).rounded())) ms")
        }
        return Summary(
            finishReason: chunk.finishReason.map { "\($0)" }, finishText: finish,
            usageText: parts.joined(separator: " · "))
    }
}
