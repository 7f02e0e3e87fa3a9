import Foundation
import ModelDepot

/// A ``Transcriber`` for any server that speaks OpenAI's audio API (`POST /v1/audio/transcriptions` and
/// `/v1/audio/translations`): OpenAI itself, faster-whisper-server, whisper.cpp's and vLLM's servers.
///
/// It always asks for `verbose_json` and renders text, SRT and WebVTT itself, so every output format works
/// with servers that only return JSON. Audio over the server's upload limit is cut at pauses when it is PCM
/// WAV (the pieces' times are shifted back); anything else over the limit is refused before uploading.
///
/// ```swift
/// let transcriber = try OpenAICompatibleTranscriber(baseURL: URL(string: "http://127.0.0.1:8000/v1")!)
/// let transcript = try await transcriber.transcribe(
///     try AudioInput(contentsOf: recording), options: TranscriptionOptions(language: "en"))
/// print(transcript.rendered(as: .srt))
/// ```
public struct OpenAICompatibleTranscriber: Transcriber {
    /// What a server accepts, where servers differ from OpenAI's documentation.
    public struct ServerTraits: Sendable, Hashable {
        /// The form field that names the model: `model` for OpenAI, `model_name` for faster-whisper-server.
        public var modelField: String
        /// Whether the server can give word timings (`timestamp_granularities[]=word`).
        public var givesWordTimestamps: Bool
        /// The largest file the server takes in one upload, in bytes.
        public var uploadLimit: Int

        public init(modelField: String = "model", givesWordTimestamps: Bool = true, uploadLimit: Int = 25_000_000) {
            self.modelField = modelField
            self.givesWordTimestamps = givesWordTimestamps
            self.uploadLimit = uploadLimit
        }

        /// OpenAI's API as documented: 25 MB uploads, word timings with `verbose_json`.
        public static let openAI = ServerTraits()
        /// PyPI's faster-whisper-server 0.0.3: the model in `model_name`, segments but no word timings.
        public static let fasterWhisperServer = ServerTraits(modelField: "model_name", givesWordTimestamps: false)
    }

    let provider: OpenAICompatibleProvider
    public let traits: ServerTraits
    /// The API root, e.g. `http://127.0.0.1:8000/v1`.
    public var baseURL: URL { provider.baseURL }

    /// A client for the OpenAI-compatible transcription API at `baseURL` (`…/v1`), through the environment's proxies.
    public init(
        baseURL: URL, model: String? = nil, credentials: InferenceCredentials = .none, traits: ServerTraits = .openAI,
        retryPolicy: RetryPolicy = RetryPolicy(
            maxAttempts: 3, baseDelay: .milliseconds(500), maxRetryAfter: .seconds(60))
    ) throws {
        try self.init(
            baseURL: baseURL, model: model, credentials: credentials, traits: traits,
            transport: OpenAICompatibleProvider.sharedTransport, retryPolicy: retryPolicy)
    }

    /// The same over `transport`, with the clock given.
    package init(
        baseURL: URL, model: String? = nil, credentials: InferenceCredentials = .none, traits: ServerTraits = .openAI,
        transport: any HTTPTransport,
        clock: any Clock<Duration> = ContinuousClock(),
        retryPolicy: RetryPolicy = RetryPolicy(
            maxAttempts: 3, baseDelay: .milliseconds(500), maxRetryAfter: .seconds(60))
    ) throws {
        provider = try OpenAICompatibleProvider(
            baseURL: baseURL, model: model, credentials: credentials, transport: transport, clock: clock,
            retryPolicy: retryPolicy)
        guard traits.uploadLimit > WaveFile.headerSize + 4096 else {
            throw ModelDepotError(
                .invalidArgument, "An upload limit of \(traits.uploadLimit) bytes is too small to send audio.")
        }
        self.traits = traits
    }

    public func transcribe(_ audio: AudioInput, options: TranscriptionOptions) async throws -> Transcript {
        try await transcribe(audio, options: options, progress: { _ in })
    }

    /// ``transcribe(_:options:)``, telling `progress` after each piece when the audio had to be cut.
    public func transcribe(
        _ audio: AudioInput, options: TranscriptionOptions, progress: @Sendable (TranscriptionProgress) -> Void
    ) async throws -> Transcript {
        if let problem = options.problem {
            throw ModelDepotError(.invalidArgument, "Invalid transcription settings: \(problem).")
        }
        let format = try Self.checkedFormat(of: audio)
        let wave = format == .wav ? try WaveFile(audio.data, name: audio.name) : nil
        if let wave, wave.frameCount == 0 {
            throw ModelDepotError(.invalidAudio, "\(audio.name) holds no audio (its WAV data is empty).")
        }
        let duration = wave?.duration
        let transcript: Transcript
        if audio.data.count <= traits.uploadLimit {
            transcript = try await upload(audio.data, name: audio.uploadName, format: format, options: options)
            progress(TranscriptionProgress(piecesDone: 1, pieces: 1, secondsDone: duration ?? 0, duration: duration))
        } else {
            guard let wave, wave.canBeCut else { throw tooLarge(audio, format: format) }
            let pieces = QuietSplitter().pieces(of: wave, maximumBytes: traits.uploadLimit)
            var done: [Transcript] = []
            progress(TranscriptionProgress(piecesDone: 0, pieces: pieces.count, secondsDone: 0, duration: duration))
            for (index, piece) in pieces.enumerated() {
                let stem = (audio.uploadName as NSString).deletingPathExtension
                let part = try await upload(
                    wave.piece(frames: piece.frames), name: "\(stem)-\(index + 1).wav", format: .wav,
                    options: options)
                done.append(part.shifted(by: piece.start))
                let seconds = Double(piece.frames.upperBound) / Double(wave.sampleRate)
                progress(
                    TranscriptionProgress(
                        piecesDone: index + 1, pieces: pieces.count, secondsDone: seconds, duration: duration))
            }
            transcript = Transcript.joined(done, duration: duration)
        }
        guard !transcript.text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            let length = (transcript.duration ?? duration).map { String(format: " (%.1f s)", $0) } ?? ""
            throw ModelDepotError(.noSpeech, "No speech was found in \(audio.name)\(length).")
        }
        return transcript
    }

    /// The audio's format from its bytes; every reason it cannot be sent is an `invalidAudio` error.
    static func checkedFormat(of audio: AudioInput) throws -> AudioFormat {
        guard !audio.data.isEmpty else {
            throw ModelDepotError(.invalidAudio, "\(audio.name) is empty: there is no audio to transcribe.")
        }
        guard let format = audio.format else {
            let head = audio.data.prefix(8).map { String(format: "%02x", $0) }.joined(separator: " ")
            throw ModelDepotError(
                .invalidAudio,
                "\(audio.name) is not audio ModelDepot recognises (it starts with \(head)). Use WAV, FLAC, MP3, OGG, M4A or WebM."
            )
        }
        return format
    }

    private func tooLarge(_ audio: AudioInput, format: AudioFormat) -> ModelDepotError {
        // Upload limits are stated in decimal megabytes (OpenAI's "25 MB"): say them the same way.
        let size = String(format: "%.1f MB", Double(audio.data.count) / 1e6)
        let limit = String(format: "%.1f MB", Double(traits.uploadLimit) / 1e6)
        let advice =
            format == .wav
            ? "It is a WAV file with samples ModelDepot cannot cut; convert it to 16-bit PCM WAV"
            : "Convert it to 16-bit PCM WAV, which ModelDepot cuts into pieces at pauses"
        return ModelDepotError(
            .audioTooLarge,
            "\(audio.name) is \(size), over the server's upload limit of \(limit). \(advice) (e.g. `ffmpeg -i \(audio.name) -ac 1 -ar 16000 out.wav`), or split it yourself."
        )
    }

    /// One upload: the multipart form OpenAI documents, answered with `verbose_json`.
    private func upload(_ data: Data, name: String, format: AudioFormat, options: TranscriptionOptions) async throws
        -> Transcript
    {
        var form = MultipartForm()
        form.addFile("file", fileName: name, mediaType: format.mediaType, data: data)
        if let model = options.model ?? provider.model { form.add(traits.modelField, model) }
        if let language = options.language, !options.translate { form.add("language", language) }
        if let prompt = options.prompt { form.add("prompt", prompt) }
        if let temperature = options.temperature { form.add("temperature", String(temperature)) }
        form.add("response_format", "verbose_json")
        if options.wordTimestamps, traits.givesWordTimestamps {
            form.add("timestamp_granularities[]", "word")
            form.add("timestamp_granularities[]", "segment")
        }
        guard let body = form.encoded() else {
            // A random 128-bit boundary inside the audio: astronomically unlikely, and another try fixes it.
            return try await upload(data, name: name, format: format, options: options)
        }
        let route = options.translate ? "audio/translations" : "audio/transcriptions"
        let answer = try await provider.withRetries {
            try await provider.call("POST", route, body: body, contentType: form.contentType)
        }
        let response = try provider.decode(TranscriptionWireFormat.Response.self, from: answer, what: "a transcription")
        return TranscriptionWireFormat.transcript(from: response, wordTimestampsAsked: options.wordTimestamps)
    }
}
