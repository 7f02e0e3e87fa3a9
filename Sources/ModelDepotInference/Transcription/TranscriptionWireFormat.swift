import ModelDepot

/// OpenAI's transcription answers (`json` and `verbose_json`), only the fields ModelDepot reads. Servers that
/// follow it loosely (faster-whisper-server leaves out `words`, some send `null`s) decode too.
enum TranscriptionWireFormat {
    struct Response: Decodable {
        struct Segment: Decodable {
            var start: Double
            var end: Double
            var text: String
            var avgLogprob: Double?
            var noSpeechProb: Double?

            enum CodingKeys: String, CodingKey {
                case start, end, text
                case avgLogprob = "avg_logprob"
                case noSpeechProb = "no_speech_prob"
            }
        }

        struct Word: Decodable {
            var start: Double
            var end: Double
            var word: String
        }

        var text: String
        var language: String?
        var duration: Double?
        var segments: [Segment]?
        var words: [Word]?
    }

    static func transcript(from response: Response, wordTimestampsAsked: Bool) -> Transcript {
        let words = (response.words ?? []).map { Transcript.Word(start: $0.start, end: $0.end, word: $0.word) }
        return Transcript(
            text: response.text, language: response.language, duration: response.duration,
            segments: (response.segments ?? []).map {
                Transcript.Segment(
                    start: $0.start, end: $0.end, text: $0.text, averageLogProbability: $0.avgLogprob,
                    noSpeechProbability: $0.noSpeechProb)
            }, words: words, wordTimestampsMissing: wordTimestampsAsked && words.isEmpty)
    }
}
