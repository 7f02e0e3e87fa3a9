import Foundation
import ModelDepot
import ModelDepotTesting
import Synchronization
import Testing

@testable import ModelDepotInference

/// The transcription client's parts without a recognizer: sniffing, subtitles, cutting WAV files, the request
/// it sends and how it reads answers and errors (scripted server). `TranscriptionPeerTests` runs the real thing.
@Suite struct TranscriptionUnitTests {
    // MARK: - Sniffing

    @Test func formatsAreKnownByTheirFirstBytes() {
        func sniff(_ bytes: [UInt8]) -> AudioFormat? { AudioFormat.sniff(bytes + [UInt8](repeating: 0, count: 64)) }
        #expect(sniff(Array("RIFF\u{0}\u{0}\u{0}\u{0}WAVEfmt ".utf8)) == .wav)
        #expect(sniff(Array("fLaC".utf8)) == .flac)
        #expect(sniff(Array("OggS".utf8)) == .ogg)
        #expect(sniff([0, 0, 0, 0x1C] + Array("ftypM4A ".utf8)) == .m4a)
        #expect(sniff([0x1A, 0x45, 0xDF, 0xA3, 0x9F]) == .webm)
        #expect(sniff([0xFF, 0xFB, 0x90, 0x64]) == .mp3)
        // An ID3v2 tag of 16 bytes, then an MPEG-1 layer III frame header.
        #expect(
            sniff(Array("ID3".utf8) + [4, 0, 0, 0, 0, 0, 16] + [UInt8](repeating: 0, count: 16) + [0xFF, 0xFB, 0x90])
                == .mp3)
        // ADTS AAC (layer bits 00) and a "bad" bitrate are not MP3.
        #expect(sniff([0xFF, 0xF1, 0x50, 0x80]) == nil)
        #expect(sniff([0xFF, 0xFB, 0xF0, 0x64]) == nil)
        #expect(sniff(Array("RIFF\u{0}\u{0}\u{0}\u{0}AVI ".utf8)) == nil)
        #expect(sniff(Array("hello, this is text".utf8)) == nil)
        #expect(AudioFormat.sniff([UInt8]()) == nil)
    }

    @Test func randomBytesAreNotAudio() {
        // A fixed linear congruential sequence (Knuth's MMIX constants): the same bytes on every run.
        var state: UInt64 = 26
        var recognised = 0
        for _ in 0..<1000 {
            let bytes = (0..<256).map { _ -> UInt8 in
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                return UInt8(truncatingIfNeeded: state >> 56)
            }
            if AudioFormat.sniff(bytes) != nil { recognised += 1 }
        }
        #expect(recognised == 0)
    }

    @Test func theUploadNameTellsTheTruthAboutTheFormat() {
        let flac = AudioInput(data: Data("fLaC".utf8) + Data(count: 60), name: "talk.wav")
        #expect(flac.format == .flac)
        #expect(flac.uploadName == "talk.flac")
        #expect(AudioInput(data: Data("fLaC".utf8), name: "stdin").uploadName == "stdin.flac")
    }

    // MARK: - Subtitles

    static let sample = Transcript(
        text: " Hello there. General Kenobi!", language: "en", duration: 3725.5,
        segments: [
            .init(start: 0, end: 1.2344, text: " Hello there."),
            .init(start: 1.2, end: 2.5, text: "  \n "),
            .init(start: 3723.0005, end: 3725.5, text: " General\n\nKenobi --> now!"),
        ])

    @Test func srtHasNumberedCuesWithCommaMilliseconds() {
        #expect(
            Self.sample.rendered(as: .srt) == """
                1
                00:00:00,000 --> 00:00:01,234
                Hello there.

                2
                01:02:03,001 --> 01:02:05,500
                General Kenobi -> now!

                """)
    }

    @Test func vttHasAHeaderAndDotMilliseconds() {
        #expect(
            Self.sample.rendered(as: .vtt) == """
                WEBVTT

                00:00:00.000 --> 00:00:01.234
                Hello there.

                01:02:03.001 --> 01:02:05.500
                General Kenobi -> now!

                """)
    }

    @Test func textAndJSONCarryWhatWasHeard() throws {
        #expect(Self.sample.rendered(as: .text) == "Hello there. General Kenobi!\n")
        let decoded = try JSONDecoder().decode(Transcript.self, from: Data(Self.sample.rendered(as: .json).utf8))
        #expect(decoded == Self.sample)
    }

    @Test func cueTimesNeverRunBackwards() {
        let overlapping = Transcript(
            text: "a b", segments: [.init(start: 5, end: 6, text: "a"), .init(start: 4, end: 3, text: "b")])
        #expect(overlapping.rendered(as: .srt).contains("00:00:05,000 --> 00:00:05,000\nb"))
    }

    // MARK: - Cutting WAV files

    @Test func longWAVIsCutInTheQuietAndEveryPieceFits() throws {
        // 16 kHz mono: 4 s tone, 0.5 s silence, 4 s tone, 0.5 s silence, 4 s tone.
        let wave = try WaveFile(
            Self.wave(sections: [(4, true), (0.5, false), (4, true), (0.5, false), (4, true)]), name: "t.wav")
        #expect(wave.frameCount == 16000 * 13)
        #expect(abs(wave.duration - 13) < 1e-9)
        let limit = WaveFile.headerSize + 16000 * 2 * 5  // 5 s a piece at most
        let pieces = QuietSplitter().pieces(of: wave, maximumBytes: limit)
        #expect(pieces.count == 3)
        #expect(pieces.first?.frames.lowerBound == 0)
        #expect(pieces.last?.frames.upperBound == wave.frameCount)
        for (piece, next) in zip(pieces, pieces.dropFirst()) {
            #expect(piece.frames.upperBound == next.frames.lowerBound)
        }
        for piece in pieces { #expect(wave.piece(frames: piece.frames).count <= limit) }
        // The cuts fall in the silences (4.0-4.5 s and 8.5-9.0 s).
        let cuts = pieces.dropFirst().map(\.start)
        #expect((4.0...4.5).contains(cuts[0]), "cut at \(cuts[0]) s")
        #expect((8.5...9.0).contains(cuts[1]), "cut at \(cuts[1]) s")
        // A piece is a WAV file of its own with the same format.
        let piece = try WaveFile(wave.piece(frames: pieces[1].frames), name: "piece.wav")
        #expect(piece.sampleRate == 16000 && piece.channels == 1 && piece.frameCount == pieces[1].frames.count)
    }

    @Test func theCutIsInTheLongestPauseNotTheLastSilentMoment() throws {
        // A 0.4 s pause between sentences, then a 60 ms closure (the silent start of a "k") inside a later word.
        let wave = try WaveFile(
            Self.wave(sections: [(3.8, true), (0.4, false), (0.5, true), (0.06, false), (4.2, true)]), name: "t.wav")
        let pieces = QuietSplitter().pieces(of: wave, maximumBytes: WaveFile.headerSize + 16000 * 2 * 5)
        let cut = try #require(pieces.dropFirst().first?.start)
        #expect((3.8...4.2).contains(cut), "cut at \(cut) s")
    }

    @Test func damagedAndUnusualWAVFilesAreNamed() throws {
        #expect(throws: ModelDepotError.self) { try WaveFile(Data("RIFF\0\0\0\0WAVE".utf8), name: "x.wav") }
        var adpcm = Self.wave(sections: [(0.1, true)])
        adpcm[20] = 2  // format tag 2: Microsoft ADPCM
        let wave = try WaveFile(adpcm, name: "a.wav")
        #expect(!wave.canBeCut)
    }

    // MARK: - Requests and answers (scripted server)

    static let verbose = #"""
        {"task":"transcribe","language":"english","duration":2.5,"text":" Hello world.",
         "segments":[{"id":0,"start":0.0,"end":2.4,"text":" Hello world.","avg_logprob":-0.2,"no_speech_prob":0.01}],
         "words":[{"start":0.1,"end":0.6,"word":" Hello"},{"start":0.7,"end":1.3,"word":" world."}]}
        """#

    static func transcriber(
        _ server: ScriptedHTTPServer, traits: OpenAICompatibleTranscriber.ServerTraits = .openAI, attempts: Int = 1
    ) throws -> OpenAICompatibleTranscriber {
        try OpenAICompatibleTranscriber(
            baseURL: server.baseURL.appendingPathComponent("v1"), model: "whisper-1", traits: traits,
            transport: OpenAICompatibleProvider.sharedTransport,
            clock: ImmediateClock(), retryPolicy: RetryPolicy(maxAttempts: attempts, baseDelay: .milliseconds(10)))
    }

    /// The text fields of a multipart body, by name (repeated names keep every value), read the simple way.
    static func fields(_ request: RecordedRequest) -> [String: [String]] {
        let boundary = request.header("Content-Type")?.components(separatedBy: "boundary=").last ?? ""
        var result: [String: [String]] = [:]
        for part in String(decoding: request.body, as: UTF8.self).components(separatedBy: "--" + boundary) {
            guard let nameRange = part.range(of: "name=\""), !part.contains("filename=") else { continue }
            let name = part[nameRange.upperBound...].prefix { $0 != "\"" }
            // "\r\n" is one Character in Swift: dropping the last one removes the line break before the boundary.
            let value = part.components(separatedBy: "\r\n\r\n").dropFirst().joined().dropLast()
            result[String(name), default: []].append(String(value))
        }
        return result
    }

    @Test func aTranscriptionAsksForVerboseJSONAndReadsSegmentsAndWords() async throws {
        let server = try await ScriptedHTTPServer.start(replies: [.json(Self.verbose)])
        let audio = AudioInput(data: Self.wave(sections: [(0.5, true)]), name: "hello.bin")
        let transcript = try await Self.transcriber(server).transcribe(
            audio,
            options: TranscriptionOptions(language: "en", wordTimestamps: true, prompt: "Kenobi", temperature: 0.2))
        #expect(transcript.text == " Hello world.")
        #expect(transcript.language == "english" && transcript.duration == 2.5)
        #expect(
            transcript.segments == [
                .init(start: 0, end: 2.4, text: " Hello world.", averageLogProbability: -0.2, noSpeechProbability: 0.01)
            ])
        #expect(transcript.words.map(\.word) == [" Hello", " world."])
        #expect(!transcript.wordTimestampsMissing)
        let request = try #require(server.requests.first)
        #expect(request.method == "POST" && request.path == "/v1/audio/transcriptions")
        #expect(request.header("Content-Type")?.hasPrefix("multipart/form-data; boundary=") == true)
        let fields = Self.fields(request)
        #expect(fields["model"] == ["whisper-1"] && fields["language"] == ["en"] && fields["prompt"] == ["Kenobi"])
        #expect(fields["temperature"] == ["0.2"] && fields["response_format"] == ["verbose_json"])
        #expect(fields["timestamp_granularities[]"] == ["word", "segment"])
        // The file goes up under the name its bytes call for.
        #expect(String(decoding: request.body, as: UTF8.self).contains(#"filename="hello.wav""#))
        try await server.shutdown()
    }

    @Test func translationGoesToItsRouteWithoutALanguage() async throws {
        let server = try await ScriptedHTTPServer.start(replies: [.json(#"{"text":"Hello."}"#)])
        let audio = AudioInput(data: Self.wave(sections: [(0.5, true)]), name: "hallo.wav")
        let transcript = try await Self.transcriber(server).transcribe(
            audio, options: TranscriptionOptions(language: "de", translate: true))
        #expect(transcript.text == "Hello." && transcript.segments.isEmpty)
        #expect(server.requests.first?.path == "/v1/audio/translations")
        #expect(Self.fields(try #require(server.requests.first))["language"] == nil)
        try await server.shutdown()
    }

    @Test func fasterWhisperServerGetsModelNameAndMissingWordsAreSaid() async throws {
        let server = try await ScriptedHTTPServer.start(replies: [.json(#"{"text":" Hi.","segments":[]}"#)])
        let audio = AudioInput(data: Self.wave(sections: [(0.5, true)]), name: "hi.wav")
        let transcript = try await Self.transcriber(server, traits: .fasterWhisperServer).transcribe(
            audio, options: TranscriptionOptions(wordTimestamps: true))
        #expect(transcript.wordTimestampsMissing)
        let fields = Self.fields(try #require(server.requests.first))
        #expect(fields["model_name"] == ["whisper-1"] && fields["model"] == nil)
        #expect(fields["timestamp_granularities[]"] == nil)
        try await server.shutdown()
    }

    @Test func serverErrorsAreQuotedAndNothingIsInvented() async throws {
        let fastAPI =
            #"{"detail":{"error":{"message":"Unsupported response_format: srt","type":"invalid_request_error"}}}"#
        let server = try await ScriptedHTTPServer.start(replies: [
            .json(fastAPI, status: 400), .json(#"{"error":{"message":"model overloaded"}}"#, status: 503),
            .json(#"{"text":"  ","segments":[]}"#),
        ])
        let audio = AudioInput(data: Self.wave(sections: [(0.5, true)]), name: "a.wav")
        let transcriber = try Self.transcriber(server)
        let refused = await #expect(throws: ModelDepotError.self) {
            try await transcriber.transcribe(audio, options: .init())
        }
        #expect(refused?.code == .invalidRequest)
        #expect(refused?.message.contains("Unsupported response_format: srt") == true)
        let failed = await #expect(throws: ModelDepotError.self) {
            try await transcriber.transcribe(audio, options: .init())
        }
        #expect(failed?.code == .serverError && failed?.message.contains("model overloaded") == true)
        let silent = await #expect(throws: ModelDepotError.self) {
            try await transcriber.transcribe(audio, options: .init())
        }
        #expect(silent?.code == .noSpeech)
        #expect(silent?.message == "No speech was found in a.wav (0.5 s).")
        try await server.shutdown()
    }

    @Test func badInputIsRefusedBeforeAnythingIsSent() async throws {
        let server = try await ScriptedHTTPServer.start()
        let transcriber = try Self.transcriber(
            server, traits: .init(uploadLimit: 10_000))
        func failure(_ audio: AudioInput, _ options: TranscriptionOptions = .init()) async -> ModelDepotError? {
            await #expect(throws: ModelDepotError.self) { try await transcriber.transcribe(audio, options: options) }
        }
        let empty = await failure(AudioInput(data: Data(), name: "empty.wav"))
        #expect(
            empty?.code == .invalidAudio && empty?.message == "empty.wav is empty: there is no audio to transcribe.")
        let text = await failure(AudioInput(data: Data("just some text\n".utf8), name: "notes.mp3"))
        #expect(text?.code == .invalidAudio)
        #expect(
            text?.message.hasPrefix("notes.mp3 is not audio ModelDepot recognises (it starts with 6a 75 73 74") == true)
        let noSamples = await failure(AudioInput(data: Self.wave(sections: []), name: "silent.wav"))
        #expect(noSamples?.code == .invalidAudio && noSamples?.message.contains("holds no audio") == true)
        let bigMP3 = await failure(
            AudioInput(data: Data([0xFF, 0xFB, 0x90, 0x64]) + Data(count: 20_000), name: "long.mp3"))
        #expect(bigMP3?.code == .audioTooLarge)
        #expect(
            bigMP3?.message.hasPrefix(
                "long.mp3 is 0.0 MB, over the server's upload limit of 0.0 MB. Convert it to 16-bit PCM WAV") == true)
        let language = await failure(AudioInput(data: Self.wave(sections: [(0.1, true)])), .init(language: "English"))
        #expect(language?.code == .invalidArgument && language?.message.contains("not an ISO-639-1 code") == true)
        #expect(server.requests.isEmpty)
        try await server.shutdown()
    }

    @Test func aLongWAVGoesUpInPiecesWhoseTimesAreShiftedBack() async throws {
        let piece =
            #"{"text":" part","segments":[{"start":0.5,"end":1.5,"text":" part"}],"words":[{"start":0.5,"end":1.0,"word":" part"}]}"#
        let server = try await ScriptedHTTPServer.start(replies: [.json(piece), .json(piece), .json(piece)])
        let wave = Self.wave(sections: [(4, true), (0.5, false), (4, true), (0.5, false), (4, true)])
        let transcriber = try Self.transcriber(server, traits: .init(uploadLimit: WaveFile.headerSize + 16000 * 2 * 5))
        let seen = Mutex<[TranscriptionProgress]>([])
        let transcript = try await transcriber.transcribe(
            AudioInput(data: wave, name: "long.wav"), options: .init(prompt: "Names: Kenobi."),
            progress: { update in seen.withLock { $0.append(update) } })
        #expect(server.requests.count == 3)
        #expect(transcript.text == "part part part" && transcript.duration == 13)
        let starts = transcript.segments.map(\.start)
        #expect(
            starts.count == 3 && starts[0] == 0.5 && (4.5...5.0).contains(starts[1]) && (9.0...9.5).contains(starts[2]))
        #expect(transcript.words.count == 3 && transcript.words[2].start == starts[2])
        // Every piece gets the caller's prompt, not the text before it (Whisper repeats a prompt into a quiet
        // piece).
        #expect(server.requests.allSatisfy { Self.fields($0)["prompt"] == ["Names: Kenobi."] })
        #expect(String(decoding: server.requests[2].body, as: UTF8.self).contains(#"filename="long-3.wav""#))
        #expect(seen.withLock { $0.map(\.piecesDone) } == [0, 1, 2, 3])
        #expect(seen.withLock { $0.last?.secondsDone } == 13)
        try await server.shutdown()
    }

    /// The calls "Transcribing speech" (the DocC article) shows, as written there.
    @Test func theArticlesCallsWork() async throws {
        let server = try await ScriptedHTTPServer.start(replies: [.json(Self.verbose), .json(Self.verbose)])
        let folder = try TemporaryDirectory(prefix: "transcribe-article")
        defer { folder.remove() }
        let recording = folder.path("interview.m4a")
        try Self.wave(sections: [(0.5, true)]).write(to: recording)
        let subtitles = folder.path("interview.srt")

        let transcriber = try OpenAICompatibleTranscriber(
            baseURL: server.baseURL.appendingPathComponent("v1"), model: "whisper-1")
        let audio = try AudioInput(contentsOf: recording)
        let transcript = try await transcriber.transcribe(
            audio, options: TranscriptionOptions(language: "en", wordTimestamps: true))
        try transcript.rendered(as: .srt).write(to: subtitles, atomically: true, encoding: .utf8)
        #expect(
            try String(contentsOf: subtitles, encoding: .utf8).hasPrefix(
                "1\n00:00:00,000 --> 00:00:02,400\nHello world."))
        #expect(audio.format == .wav, "an .m4a name does not make WAV bytes M4A")

        let pieces = Mutex(0)
        _ = try await transcriber.transcribe(audio, options: .init()) { progress in
            pieces.withLock { $0 = progress.pieces }
        }
        #expect(pieces.withLock { $0 } == 1)
        try await server.shutdown()
    }

    /// A 16-bit mono 16 kHz WAV of tone (440 Hz, half scale) and silence sections, in seconds.
    static func wave(sections: [(seconds: Double, tone: Bool)]) -> Data {
        var samples: [Int16] = []
        for section in sections {
            let count = Int(section.seconds * 16000)
            for index in 0..<count {
                samples.append(section.tone ? Int16(16000 * sin(2 * Double.pi * 440 * Double(index) / 16000)) : 0)
            }
        }
        var data = Data()
        func append(_ value: Int, _ width: Int) {
            for index in 0..<width { data.append(UInt8(truncatingIfNeeded: value >> (8 * index))) }
        }
        data.append(contentsOf: Array("RIFF".utf8))
        append(36 + samples.count * 2, 4)
        data.append(contentsOf: Array("WAVEfmt ".utf8))
        append(16, 4)
        append(1, 2)
        append(1, 2)
        append(16000, 4)
        append(32000, 4)
        append(2, 2)
        append(16, 2)
        data.append(contentsOf: Array("data".utf8))
        append(samples.count * 2, 4)
        for sample in samples { append(Int(sample), 2) }
        return data
    }
}
