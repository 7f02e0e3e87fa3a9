#if os(Linux) || os(macOS)
    import ArgumentParser
    import Foundation
    import ModelDepot
    import ModelDepotInference

    struct TranscribeCommand: AsyncParsableCommand, ReportsFailuresAsJSON {
        static let configuration = CommandConfiguration(
            commandName: "transcribe",
            abstract:
                "Turn speech into text with timestamps, through an OpenAI-compatible server or a downloaded Whisper model.",
            discussion: """
                Each FILE (WAV, FLAC, MP3, OGG, M4A or WebM, judged by its bytes; - reads stdin) is transcribed and \
                printed to stdout in --format, or written to --output-dir as NAME.txt, .json, .srt or .vtt. SRT and \
                WebVTT are made here from the server's timed segments, so they work with servers that only return \
                JSON. A PCM WAV file over the upload limit is cut at pauses and sent in pieces; other formats over \
                the limit are refused. One failed file does not stop the others; the exit status is 1 if any failed.
                --local NAME serves a downloaded CTranslate2 Whisper model from the catalog (whisper-tiny-en-ct2, \
                whisper-small-ct2, whisper-large-v3-ct2) with faster-whisper-server on 127.0.0.1 and stops it afterwards.
                """)

        @Argument(help: "Audio files to transcribe; - reads standard input.")
        var files: [String] = []

        @Option(help: "An OpenAI-compatible API base URL, e.g. http://127.0.0.1:8000/v1 or https://api.openai.com/v1.")
        var endpoint: String?

        @Option(
            help: "A downloaded CTranslate2 Whisper model from the catalog, served on 127.0.0.1 while the command runs."
        )
        var local: String?

        @Option(help: "The model id to ask for (default: the local model's name, else whisper-1 for --endpoint).")
        var model: String?

        @Option(help: "The API key (default: MODELDEPOT_API_KEY; Hugging Face hosts use HF_TOKEN).")
        var apiKey: String?

        @Option(help: "The spoken language as an ISO-639-1 code (en, de…); default: detected.")
        var language: String?

        @Flag(help: "Translate the speech into English.")
        var translate = false

        @Option(help: "Output format: text, json, srt or vtt.")
        var format: String = "text"

        @Flag(help: "Ask for each word's timing (in --format json and --json).")
        var wordTimestamps = false

        @Option(help: "Text that comes before the audio: names, spellings, style.")
        var prompt: String?

        @Option(help: "Sampling temperature, 0 to 1.")
        var temperature: Double?

        @Option(help: "Write one file per input into this folder (NAME.txt, .json, .srt or .vtt).")
        var outputDir: String?

        @Option(help: "The server's largest upload (default 25MB, OpenAI's).")
        var uploadLimit: String = "25MB"

        @Flag(help: "Print one JSON object with every file's transcript or error.")
        var json = false

        @OptionGroup var cacheOptions: CacheOptions

        @OptionGroup var catalogOptions: CatalogOptions

        var failuresAsJSON: Bool { json }

        func validate() throws {
            guard !files.isEmpty else {
                throw ValidationError("Give at least one audio file, or - for standard input.")
            }
            guard (endpoint == nil) != (local == nil) else {
                throw ValidationError(
                    "Pass exactly one of --endpoint URL (a running server) or --local NAME (a downloaded Whisper model)."
                )
            }
            guard TranscriptFormat(rawValue: format) != nil else {
                throw ValidationError("'\(format)' is not a format; use text, json, srt or vtt.")
            }
            if files.filter({ $0 == "-" }).count > 1 {
                throw ValidationError("Standard input (-) can be read only once.")
            }
        }

        /// One file's outcome, as `--json` prints it.
        struct FileResult: Encodable {
            struct Failure: Encodable {
                var code: String
                var message: String
            }
            var input: String
            var output: String?
            var transcript: Transcript?
            var error: Failure?
        }

        func run() async throws {
            let format = TranscriptFormat(rawValue: format) ?? .text
            let limit = try ByteSize.parse(uploadLimit)
            let options = TranscriptionOptions(
                model: model, language: language, translate: translate, wordTimestamps: wordTimestamps, prompt: prompt,
                temperature: temperature)
            if let problem = options.problem {
                throw ModelDepotError(.invalidArgument, "Invalid settings: \(problem).")
            }
            let outputFolder = try outputDir.map(Self.outputFolder)
            let results = try await withTranscriber(uploadLimit: Int(clamping: limit)) { transcriber in
                var results: [FileResult] = []
                for file in files {
                    results.append(
                        await transcribe(file, with: transcriber, options: options, format: format, into: outputFolder))
                }
                return results
            }
            if json { printJSON(["files": results]) }
            let failed = results.filter { $0.error != nil }
            guard failed.isEmpty else {
                if results.count > 1 {
                    printStatus(
                        "\(failed.count) of \(results.count) files failed: \(failed.map(\.input).joined(separator: ", "))"
                    )
                }
                throw ExitCode(1)
            }
        }

        private func transcribe(
            _ file: String, with transcriber: OpenAICompatibleTranscriber, options: TranscriptionOptions,
            format: TranscriptFormat, into folder: URL?
        ) async -> FileResult {
            let shown = file == "-" ? "stdin" : file
            do {
                let audio =
                    file == "-"
                    ? AudioInput(data: FileHandle.standardInput.readDataToEndOfFile(), name: "stdin")
                    : try AudioInput(contentsOf: URL(fileURLWithPath: file))
                let quiet = json
                let transcript = try await transcriber.transcribe(audio, options: options) { progress in
                    guard !quiet, progress.pieces > 1 else { return }
                    let seconds =
                        progress.duration.map { String(format: " (%.0f of %.0f s)", progress.secondsDone, $0) } ?? ""
                    printStatus("\(shown): piece \(progress.piecesDone) of \(progress.pieces)\(seconds)")
                }
                if format.needsTimings && transcript.segments.isEmpty {
                    throw ModelDepotError(
                        .protocolViolation,
                        "The server returned no segment times for \(shown), so there is no \(format.rawValue.uppercased()) to make; use --format text or json."
                    )
                }
                if transcript.wordTimestampsMissing && !json {
                    printStatus(
                        "note: the server gave no word timestamps for \(shown); the output has segment times only.")
                }
                let rendered = transcript.rendered(as: format)
                var output: String?
                if let folder {
                    let stem =
                        file == "-" ? "stdin" : URL(fileURLWithPath: file).deletingPathExtension().lastPathComponent
                    let target = folder.appendingPathComponent("\(stem).\(format.fileExtension)")
                    try Self.write(rendered, to: target)
                    output = target.path
                    if !json { printStatus("\(shown) -> \(target.path)") }
                } else if !json {
                    StandardStreams.output(Data(rendered.utf8))
                }
                return FileResult(input: shown, output: output, transcript: transcript)
            } catch {
                let failure = error as? ModelDepotError
                let message = failure?.message ?? "\(error)"
                printStatus("error: \(shown): \(message)")
                return FileResult(
                    input: shown,
                    error: .init(code: failure?.code.rawValue ?? "unknown", message: message))
            }
        }

        /// Writes beside the target and renames, so a file that exists is always whole.
        static func write(_ text: String, to target: URL) throws {
            do {
                try Data(text.utf8).write(to: target, options: .atomic)
            } catch {
                throw ModelDepotError(.fileSystem, "Cannot write \(target.path): \(error.localizedDescription)")
            }
        }

        static func outputFolder(_ path: String) throws -> URL {
            let folder = URL(fileURLWithPath: path)
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(atPath: folder.path, isDirectory: &isFolder), !isFolder.boolValue {
                throw ModelDepotError(.invalidArgument, "--output-dir \(path) is a file; give a folder.")
            }
            do {
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            } catch {
                throw ModelDepotError(.fileSystem, "Cannot create the folder \(path): \(error.localizedDescription)")
            }
            return folder
        }

        /// Runs `body` with a transcriber; a local server started for it is stopped afterwards, whatever happens.
        func withTranscriber<T>(uploadLimit: Int, _ body: (OpenAICompatibleTranscriber) async throws -> T) async throws
            -> T
        {
            if let endpoint {
                let (url, credentials) = try InferenceOptions.endpoint(endpoint, apiKey: apiKey)
                return try await body(
                    OpenAICompatibleTranscriber(
                        baseURL: url, model: model ?? "whisper-1", credentials: credentials,
                        traits: .init(uploadLimit: uploadLimit)))
            }
            let name = local ?? ""
            let localModel = try LocalTranscriptionModel.resolve(
                name, catalog: catalogOptions.load(), cache: cacheOptions.cache)
            if !json { printStatus("Starting a local transcription server for \(name)…") }
            let server = try await LocalModelServer.startTranscription(
                model: localModel.folder, records: RuntimeRecords(cache: cacheOptions.cache))
            let cleanup = ExitCleanup.register { server.stopBeforeExit() }
            defer { ExitCleanup.unregister(cleanup) }
            do {
                var traits = OpenAICompatibleTranscriber.ServerTraits.fasterWhisperServer
                traits.uploadLimit = uploadLimit
                let transcriber = try OpenAICompatibleTranscriber(
                    baseURL: server.baseURL, model: model ?? name, traits: traits,
                    transport: OpenAICompatibleProvider.localTransport)
                let result = try await body(transcriber)
                await server.stop()
                return result
            } catch {
                let tail =
                    server.isRunning
                    ? "" : "\n\(server.runtimeDescription) stopped. Its last lines:\n\(server.logTail())"
                await server.stop()
                if let failure = error as? ModelDepotError, !tail.isEmpty {
                    throw failure.withMessage(failure.message + tail)
                }
                throw error
            }
        }
    }
#endif
