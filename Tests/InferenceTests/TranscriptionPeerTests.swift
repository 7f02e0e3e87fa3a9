import Foundation
import ModelDepot
import ModelDepotInference
import ModelDepotTesting
import Testing

/// Transcription against the real recognizer: espeak-ng speech, faster-whisper's tiny.en behind OpenAI's API
/// (a FastAPI server whose multipart parser reads our requests), and the reference subtitle readers.
@Suite(
    .serialized,
    .enabled(if: WhisperPeer.isInstalled, "faster-whisper, espeak-ng or sox is missing (scripts/test installs them)"))
struct TranscriptionPeerTests {
    @Test func knownSentencesComeBackWithTimesThatFitTheAudio() async throws {
        let folder = try TemporaryDirectory(prefix: "transcribe-sentences")
        defer { folder.remove() }
        let reference = WhisperPeer.sentences.joined(separator: " ")
        let audio = try await WhisperPeer.speech(reference, in: folder.path("speech"))
        let record = folder.path("received.jsonl")
        let transcript = try await WhisperPeer.withServer(in: folder, record: record) { baseURL in
            try await OpenAICompatibleTranscriber(baseURL: baseURL).transcribe(
                try AudioInput(contentsOf: try #require(audio["wav"])), options: .init(wordTimestamps: true))
        }
        let errorRate = WhisperPeer.wordErrorRate(transcript.text, reference: reference)
        #expect(errorRate <= 1.5 * WhisperPeer.measuredWordErrorRate, "WER \(errorRate): \(transcript.text)")
        let duration = try #require(transcript.duration)
        #expect(duration > 30 && duration < 45)
        // Words and segments move forward and stay inside the audio.
        #expect(transcript.words.count >= 70 && !transcript.wordTimestampsMissing)
        for (word, next) in zip(transcript.words, transcript.words.dropFirst()) {
            #expect(word.start <= word.end && word.end <= next.start + 0.001, "\(word) then \(next)")
        }
        #expect((transcript.words.last?.end ?? .infinity) <= duration + 0.05)
        #expect(transcript.segments.count >= 2)
        #expect(transcript.segments.allSatisfy { $0.averageLogProbability != nil && $0.noSpeechProbability != nil })

        // The subtitles we render parse with the reference readers and cover the speech.
        for format in [TranscriptFormat.srt, .vtt] {
            let file = folder.path("speech.\(format.fileExtension)")
            try transcript.rendered(as: format).write(to: file, atomically: true, encoding: .utf8)
            let cues = try await WhisperPeer.cues(in: file)
            #expect(cues.count == transcript.segments.count, "\(format)")
            #expect((cues.first?.start ?? 99) < 1.0, "\(format)")
            #expect((cues.last?.end ?? 0) >= duration - 3 && (cues.last?.end ?? .infinity) <= duration + 0.05)
            #expect(zip(cues, cues.dropFirst()).allSatisfy { $0.start <= $1.start && $0.start <= $0.end })
            #expect(
                WhisperPeer.wordErrorRate(cues.map(\.text).joined(separator: " "), reference: reference) == errorRate)
        }

        // What the server's multipart parser read.
        let request = try #require(try WhisperPeer.received(record).first)
        #expect(request.route == "/v1/audio/transcriptions")
        #expect(request.fields["response_format"] == ["verbose_json"])
        #expect(request.fields["timestamp_granularities[]"] == ["word", "segment"])
        #expect(request.file?.filename == "speech.wav" && request.file?.contentType == "audio/wav")
        #expect(request.file?.size == (try Data(contentsOf: try #require(audio["wav"]))).count)
    }

    @Test func everyFormatUnderAWrongNameIsKnownByItsBytes() async throws {
        let folder = try TemporaryDirectory(prefix: "transcribe-formats")
        defer { folder.remove() }
        let reference = WhisperPeer.sentences[4...6].joined(separator: " ")
        let audio = try await WhisperPeer.speech(reference, in: folder.path("speech"))
        let record = folder.path("received.jsonl")
        // Each file renamed to the next format's extension (and the last to .txt).
        let formats: [AudioFormat] = [.wav, .flac, .ogg, .mp3, .m4a, .webm]
        try await WhisperPeer.withServer(in: folder, record: record) { baseURL in
            let transcriber = try OpenAICompatibleTranscriber(baseURL: baseURL)
            for (index, format) in formats.enumerated() {
                let wrongName = index + 1 < formats.count ? formats[index + 1].fileExtension : "txt"
                let renamed = folder.path("clip-\(index).\(wrongName)")
                try FileManager.default.copyItem(at: try #require(audio[format.fileExtension]), to: renamed)
                let input = try AudioInput(contentsOf: renamed)
                #expect(input.format == format, "\(renamed.lastPathComponent)")
                let transcript = try await transcriber.transcribe(input, options: .init())
                let errorRate = WhisperPeer.wordErrorRate(transcript.text, reference: reference)
                #expect(errorRate <= 0.25, "\(format): WER \(errorRate): \(transcript.text)")
            }
        }
        let received = try WhisperPeer.received(record)
        #expect(received.map { $0.file?.filename } == formats.indices.map { "clip-\($0).\(formats[$0].fileExtension)" })
        #expect(received.map { $0.file?.contentType } == formats.map(\.mediaType))
    }

    @Test func translationAndLanguageReachTheServersParser() async throws {
        let folder = try TemporaryDirectory(prefix: "transcribe-fields")
        defer { folder.remove() }
        let audio = try await WhisperPeer.speech(WhisperPeer.sentences[5], in: folder.path("speech"))
        let record = folder.path("received.jsonl")
        try await WhisperPeer.withServer(in: folder, record: record) { baseURL in
            let transcriber = try OpenAICompatibleTranscriber(baseURL: baseURL, model: "tiny.en")
            let input = try AudioInput(contentsOf: try #require(audio["flac"]))
            _ = try await transcriber.transcribe(input, options: .init(translate: true, prompt: "Lemons."))
            _ = try await transcriber.transcribe(input, options: .init(language: "de", temperature: 0))
            // A file that looks like MP3 but is not: the server's refusal is quoted.
            let damaged = AudioInput(
                data: Data([0xFF, 0xFB, 0x90, 0x64]) + Data(repeating: 0x55, count: 4000), name: "bad.mp3")
            let refusal = await #expect(throws: ModelDepotError.self) {
                try await transcriber.transcribe(damaged, options: .init())
            }
            #expect(refusal?.code == .invalidRequest)
            #expect(
                refusal?.message.contains("HTTP 400: The audio could not be decoded") == true,
                "\(refusal?.message ?? "")")
        }
        let received = try WhisperPeer.received(record)
        #expect(
            received.map(\.route) == ["/v1/audio/translations", "/v1/audio/transcriptions", "/v1/audio/transcriptions"])
        #expect(received[0].fields["model"] == ["tiny.en"] && received[0].fields["prompt"] == ["Lemons."])
        #expect(received[0].fields["language"] == nil)
        #expect(received[1].fields["language"] == ["de"] && received[1].fields["temperature"] == ["0.0"])
    }

    @Test func aRecordingOverTheUploadLimitIsCutAtPausesAndLinesUp() async throws {
        let folder = try TemporaryDirectory(prefix: "transcribe-long")
        defer { folder.remove() }
        let reference = WhisperPeer.sentences.joined(separator: " ")
        let audio = try await WhisperPeer.speech(reference, in: folder.path("speech"))
        let wav = try Data(contentsOf: try #require(audio["wav"]))
        let record = folder.path("received.jsonl")
        // Room to choose: three pieces of at most 40 % each.
        let limit = wav.count * 2 / 5
        let transcript = try await WhisperPeer.withServer(in: folder, record: record) { baseURL in
            try await OpenAICompatibleTranscriber(baseURL: baseURL, traits: .init(uploadLimit: limit)).transcribe(
                AudioInput(data: wav, name: "long.wav"), options: .init(wordTimestamps: true))
        }
        let received = try WhisperPeer.received(record)
        #expect(received.count == 3)
        #expect(received.allSatisfy { ($0.file?.size ?? .max) <= limit })
        let errorRate = WhisperPeer.wordErrorRate(transcript.text, reference: reference)
        #expect(errorRate <= 1.5 * WhisperPeer.measuredWordErrorRate, "WER \(errorRate): \(transcript.text)")
        let duration = try #require(transcript.duration)
        #expect(zip(transcript.words, transcript.words.dropFirst()).allSatisfy { $0.start <= $1.start + 0.001 })
        #expect(zip(transcript.segments, transcript.segments.dropFirst()).allSatisfy { $0.start <= $1.start })
        #expect((transcript.segments.last?.end ?? .infinity) <= duration + 0.05)
        #expect((transcript.segments.last?.start ?? 0) > duration * 2 / 3)
    }
}
