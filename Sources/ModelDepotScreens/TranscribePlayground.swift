import Foundation
import ModelDepot
import ModelDepotInference

/// The Transcribe screen: a recording in, its text, timed segments and subtitles out, from any ``Transcriber``
/// (a local faster-whisper-server, an endpoint).
public struct TranscribePlayground: Sendable {
    /// What the page sends: the recording (base64 in JSON, so changes stay JSON-only) and the settings.
    public struct Request: Sendable, Decodable {
        public var name: String
        /// The audio's bytes, base64-encoded.
        public var audio: String
        public var language: String?
        public var translate: Bool?
        public var wordTimestamps: Bool?
        /// The model to transcribe with (a ``PlaygroundModels`` choice); nil: the page's default.
        public var model: String?

        public init(
            name: String, audio: String, language: String? = nil, translate: Bool? = nil, wordTimestamps: Bool? = nil
        ) {
            self.name = name
            self.audio = audio
            self.language = language
            self.translate = translate
            self.wordTimestamps = wordTimestamps
        }
    }

    /// The transcript, ready for the page.
    public struct Result: Sendable, Equatable, Encodable {
        public struct Row: Sendable, Equatable, Encodable {
            /// `0:03.2–0:07.9`
            public var timeText: String
            public var text: String
        }

        public var text: String
        /// "English, 38.2 s of audio, 10 segments."
        public var summaryText: String
        public var rows: [Row]
        /// The transcript as SubRip and WebVTT, for download.
        public var srt: String
        public var vtt: String
        /// What the person should know: word timings the server did not give.
        public var notes: [String]
    }

    /// The largest recording the page takes (decoded), as the web app's body limit allows it in base64.
    public static let maximumAudioBytes = 32 << 20

    public let transcriber: any Transcriber
    /// Where text comes from, for the page.
    public let source: String

    /// The use of a loaded model this playground holds (nil for an endpoint): the idle unload leaves the model
    /// loaded while a request works with it.
    public var use: RuntimeUse?

    public init(transcriber: any Transcriber, source: String) {
        self.transcriber = transcriber
        self.source = source
    }

    /// Transcribes the request's recording.
    ///
    /// - Throws: `invalidArgument` for audio that is not base64 or is over ``maximumAudioBytes``, and whatever
    ///   the transcriber throws (audio it cannot read, no speech, the server's refusal), each with its message.
    public func transcribe(_ request: Request) async throws -> Result {
        guard let data = Data(base64Encoded: request.audio) else {
            throw ModelDepotError(.invalidArgument, "The recording did not arrive as base64; choose the file again.")
        }
        guard data.count <= Self.maximumAudioBytes else {
            throw ModelDepotError(
                .invalidArgument,
                "The recording is \(ByteFormat.string(Int64(data.count))); this page takes up to \(ByteFormat.string(Int64(Self.maximumAudioBytes))). Use `modeldepot transcribe` for longer ones."
            )
        }
        let language = request.language?.trimmingCharacters(in: .whitespaces).lowercased()
        let options = TranscriptionOptions(
            language: language?.isEmpty == false ? language : nil, translate: request.translate ?? false,
            wordTimestamps: request.wordTimestamps ?? false)
        let name = request.name.isEmpty ? "recording" : String(request.name.suffix(200))
        let transcript = try await transcriber.transcribe(AudioInput(data: data, name: name), options: options)
        return Self.result(transcript)
    }

    static func result(_ transcript: Transcript) -> Result {
        var summary: [String] = []
        if let language = transcript.language { summary.append(languageName(language)) }
        if let duration = transcript.duration { summary.append(String(format: "%.1f s of audio", duration)) }
        let count = transcript.segments.count
        summary.append(count == 1 ? "1 segment" : "\(count) segments")
        return Result(
            text: transcript.text.trimmingCharacters(in: .whitespacesAndNewlines),
            summaryText: summary.joined(separator: ", ") + ".",
            rows: transcript.segments.map {
                Result.Row(
                    timeText: "\(clock($0.start))–\(clock($0.end))",
                    text: $0.text.trimmingCharacters(in: .whitespacesAndNewlines))
            }, srt: transcript.rendered(as: .srt), vtt: transcript.rendered(as: .vtt),
            notes: transcript.wordTimestampsMissing
                ? ["The server gave no word timings; the times are per segment."] : [])
    }

    /// A language as people read it: servers say `en` (faster-whisper) or `english` (OpenAI).
    static func languageName(_ language: String) -> String {
        if language.count <= 3, let name = Locale(identifier: "en").localizedString(forLanguageCode: language) {
            return name
        }
        return language.prefix(1).uppercased() + language.dropFirst()
    }

    /// `m:ss.t`, or `h:mm:ss.t` past an hour.
    static func clock(_ seconds: Double) -> String {
        let tenths = Int((max(0, seconds) * 10).rounded())
        let hours = tenths / 36000
        let minutes = tenths / 600 % 60
        let secs = tenths / 10 % 60
        let rest = String(format: "%02d.%d", secs, tenths % 10)
        return hours > 0 ? String(format: "%d:%02d:", hours, minutes) + rest : "\(minutes):" + rest
    }
}
