/// How to transcribe: the settings OpenAI's transcription API and Whisper runtimes share.
public struct TranscriptionOptions: Sendable, Hashable, Codable {
    /// The model to ask for; nil leaves it to the transcriber (a local server has one).
    public var model: String?
    /// The spoken language as an ISO-639-1 code (`en`, `de`); nil lets the model detect it.
    public var language: String?
    /// Translate the speech into English instead of transcribing it in its own language.
    public var translate: Bool
    /// Ask for each word's start and end. Not every server gives them: ``Transcript/wordTimestampsMissing``
    /// says when they were asked for and did not come.
    public var wordTimestamps: Bool
    /// Text that comes before the audio (names, spellings, the previous piece's words), to steer the model.
    public var prompt: String?
    /// Sampling temperature, 0...1; nil leaves it to the server.
    public var temperature: Double?

    public init(
        model: String? = nil, language: String? = nil, translate: Bool = false, wordTimestamps: Bool = false,
        prompt: String? = nil, temperature: Double? = nil
    ) {
        self.model = model
        self.language = language
        self.translate = translate
        self.wordTimestamps = wordTimestamps
        self.prompt = prompt
        self.temperature = temperature
    }

    /// What is wrong with these settings, in words, or nil when they can be sent.
    public var problem: String? {
        if let language {
            let letters = language.unicodeScalars.allSatisfy { ("a"..."z").contains($0) }
            if !letters || !(2...3).contains(language.count) {
                return "the language '\(language)' is not an ISO-639-1 code such as en or de"
            }
        }
        if let temperature, !(0...1).contains(temperature) || temperature.isNaN {
            return "the temperature \(temperature) is outside 0...1"
        }
        return nil
    }
}
