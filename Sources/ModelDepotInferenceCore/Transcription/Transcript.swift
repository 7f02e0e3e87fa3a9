import Foundation
import ModelDepotCore

/// What a transcriber heard: the text, and when each part of it was said.
public struct Transcript: Sendable, Hashable, Codable {
    /// A stretch of speech with its timing and the model's confidence.
    public struct Segment: Sendable, Hashable, Codable {
        /// Seconds from the start of the audio.
        public var start: Double
        public var end: Double
        public var text: String
        /// The mean log-probability of the segment's tokens (closer to 0 is surer), when the server gives it.
        public var averageLogProbability: Double?
        /// How likely the segment is silence or noise rather than speech, when the server gives it.
        public var noSpeechProbability: Double?

        public init(
            start: Double, end: Double, text: String, averageLogProbability: Double? = nil,
            noSpeechProbability: Double? = nil
        ) {
            self.start = start
            self.end = end
            self.text = text
            self.averageLogProbability = averageLogProbability
            self.noSpeechProbability = noSpeechProbability
        }
    }

    /// One word with its timing.
    public struct Word: Sendable, Hashable, Codable {
        public var start: Double
        public var end: Double
        public var word: String

        public init(start: Double, end: Double, word: String) {
            self.start = start
            self.end = end
            self.word = word
        }
    }

    /// The whole text.
    public var text: String
    /// The language spoken (or detected), as the server names it; nil when it does not say.
    public var language: String?
    /// The audio's length in seconds, when known.
    public var duration: Double?
    /// Timed stretches, in order; empty when the server sent text only.
    public var segments: [Segment]
    /// Timed words, in order; empty unless asked for and given.
    public var words: [Word]
    /// True when word timings were asked for and the server gave none (it cannot, or it ignored the request).
    public var wordTimestampsMissing: Bool

    public init(
        text: String, language: String? = nil, duration: Double? = nil, segments: [Segment] = [],
        words: [Word] = [], wordTimestampsMissing: Bool = false
    ) {
        self.text = text
        self.language = language
        self.duration = duration
        self.segments = segments
        self.words = words
        self.wordTimestampsMissing = wordTimestampsMissing
    }

    /// This transcript with every time moved `seconds` later: for a piece of a longer recording.
    public func shifted(by seconds: Double) -> Transcript {
        var copy = self
        copy.segments = segments.map { segment in
            var moved = segment
            moved.start += seconds
            moved.end += seconds
            return moved
        }
        copy.words = words.map { Word(start: $0.start + seconds, end: $0.end + seconds, word: $0.word) }
        return copy
    }

    /// Pieces of one recording, in order, as one transcript (each piece's times already shifted).
    public static func joined(_ pieces: [Transcript], duration: Double?) -> Transcript {
        let texts = pieces.map { $0.text.trimmingCharacters(in: .whitespacesAndNewlines) }.filter { !$0.isEmpty }
        return Transcript(
            text: texts.joined(separator: " "), language: pieces.lazy.compactMap(\.language).first,
            duration: duration, segments: pieces.flatMap(\.segments), words: pieces.flatMap(\.words),
            wordTimestampsMissing: pieces.contains { $0.wordTimestampsMissing })
    }
}
