/// How a reply is sampled. Start from a preset and adjust it with the modifiers, each of which returns a copy:
///
/// ```swift
/// let config = GenerationConfig.precise.maxTokens(200).stopSequences(["\n\n"])
/// ```
///
/// A nil value is left out of the request, so the server's own default applies.
public struct GenerationConfig: Sendable, Hashable {
    /// The model to ask for; nil uses the provider's model.
    public var model: String?
    public var temperature: Double?
    public var topP: Double?
    public var maxTokens: Int?
    /// Text that ends the reply when generated; it is not included in the reply.
    public var stopSequences: [String]
    public var frequencyPenalty: Double?
    public var presencePenalty: Double?
    /// Makes sampling repeatable on servers that support it.
    public var seed: Int?

    public init(
        model: String? = nil, temperature: Double? = nil, topP: Double? = nil, maxTokens: Int? = nil,
        stopSequences: [String] = [], frequencyPenalty: Double? = nil, presencePenalty: Double? = nil,
        seed: Int? = nil
    ) {
        self.model = model
        self.temperature = temperature
        self.topP = topP
        self.maxTokens = maxTokens
        self.stopSequences = stopSequences
        self.frequencyPenalty = frequencyPenalty
        self.presencePenalty = presencePenalty
        self.seed = seed
    }

    /// The server's defaults, with a bound on length: a local model without `max_tokens` may fill its whole
    /// context.
    public static let `default` = GenerationConfig(maxTokens: 1024)
    /// Focused, repeatable answers: facts, extraction, summaries.
    public static let precise = GenerationConfig(temperature: 0.2, topP: 0.9, maxTokens: 1024)
    /// Varied, looser text: brainstorming, stories.
    public static let creative = GenerationConfig(temperature: 0.9, topP: 0.95, maxTokens: 1024, presencePenalty: 0.3)
    /// Code: near-greedy sampling and room for longer answers.
    public static let code = GenerationConfig(temperature: 0.1, topP: 0.95, maxTokens: 2048)

    public func model(_ value: String?) -> Self { with { $0.model = value } }
    public func temperature(_ value: Double?) -> Self { with { $0.temperature = value } }
    public func topP(_ value: Double?) -> Self { with { $0.topP = value } }
    public func maxTokens(_ value: Int?) -> Self { with { $0.maxTokens = value } }
    public func stopSequences(_ value: [String]) -> Self { with { $0.stopSequences = value } }
    public func frequencyPenalty(_ value: Double?) -> Self { with { $0.frequencyPenalty = value } }
    public func presencePenalty(_ value: Double?) -> Self { with { $0.presencePenalty = value } }
    public func seed(_ value: Int?) -> Self { with { $0.seed = value } }

    private func with(_ change: (inout Self) -> Void) -> Self {
        var copy = self
        change(&copy)
        return copy
    }

    /// Values the OpenAI API would refuse, described for people; nil when the config is usable.
    public var problem: String? {
        if let temperature, !(0...2).contains(temperature) { return "temperature must be between 0 and 2" }
        if let topP, !(0...1).contains(topP) { return "topP must be between 0 and 1" }
        if let maxTokens, maxTokens < 1 { return "maxTokens must be at least 1" }
        if let frequencyPenalty, !(-2...2).contains(frequencyPenalty) {
            return "frequencyPenalty must be between -2 and 2"
        }
        if let presencePenalty, !(-2...2).contains(presencePenalty) {
            return "presencePenalty must be between -2 and 2"
        }
        if stopSequences.count > 4 { return "at most 4 stop sequences are allowed" }
        if stopSequences.contains(where: \.isEmpty) { return "a stop sequence cannot be empty" }
        return nil
    }
}
