#if os(Linux) || os(macOS)
    import Foundation
    import ModelDepot
    import ModelDepotPlatform

    /// A local OpenAI-compatible server, started on `127.0.0.1` and stopped when done: llama.cpp's for a GGUF
    /// file (``start(model:alias:runtime:contextLength:extraArguments:readyTimeout:records:)``), faster-whisper-server
    /// for a CTranslate2 Whisper model (``startTranscription(model:runtime:readyTimeout:records:)``).
    ///
    /// ```swift
    /// let server = try await LocalModelServer.start(model: ggufFile, alias: "qwen")
    /// let provider = try OpenAICompatibleProvider(baseURL: server.baseURL, model: "qwen")
    /// …
    /// await server.stop()
    /// ```
    public final class LocalModelServer: Sendable {
        /// The API root, `http://127.0.0.1:PORT/v1`.
        public let baseURL: URL
        /// The program serving, as people know it (`llama-server (/usr/bin/llama-server)`).
        public let runtimeDescription: String
        /// Where the server's own output goes (its last lines explain a failed start).
        public let logFile: URL
        private let process: ChildProcess
        private let records: RuntimeRecords?

        /// The server process's id.
        public var processIdentifier: Int32 { process.pid }
        public var isRunning: Bool { process.isRunning }

        private init(
            process: ChildProcess, records: RuntimeRecords?, baseURL: URL, runtimeDescription: String, logFile: URL
        ) {
            self.process = process
            self.records = records
            self.baseURL = baseURL
            self.runtimeDescription = runtimeDescription
            self.logFile = logFile
        }

        /// Starts `runtime` (found with ``LocalServerRuntime/find(environment:)`` when nil) on a free port and
        /// returns once it answers `GET /v1/models`. `extraArguments` go to the server program as they are (an
        /// API key, GPU layers).
        ///
        /// The server never outlives this process for long: on Linux it gets SIGTERM when this process ends, however
        /// it ends; and it is noted in `records` (nil: nowhere), where the next process that starts a server stops
        /// it if it is still running (``RuntimeRecords/reap(grace:)``, run here before starting).
        public static func start(
            model: URL, alias: String, runtime: LocalServerRuntime? = nil, contextLength: Int = 4096,
            extraArguments: [String] = [], readyTimeout: Duration = .seconds(120),
            records: RuntimeRecords? = RuntimeRecords(cache: HubCache())
        ) async throws -> LocalModelServer {
            // Finding one may ask Python what it has installed (a process run to its end): off the cooperative pool.
            var found = runtime
            if found == nil { found = try await BlockingWork.run { LocalServerRuntime.find() } }
            guard let runtime = found else {
                throw ModelDepotError(.unavailable, LocalServerRuntime.installHint)
            }
            let port = try freePort()
            let (executable, arguments) = runtime.command(
                model: model, alias: alias, port: port, contextLength: contextLength)
            return try await launch(
                executable, arguments + extraArguments, model: model, port: port, runtimeDescription: "\(runtime)",
                readyTimeout: readyTimeout, records: records)
        }

        /// Starts faster-whisper-server (found with ``TranscriptionServerRuntime/find(environment:)`` when nil) for
        /// the CTranslate2 model in the folder `model`, on a free port, and returns once it answers. Talk to it
        /// with ``OpenAICompatibleTranscriber`` and ``OpenAICompatibleTranscriber/ServerTraits/fasterWhisperServer``.
        /// It is tied to this process and recorded in `records` as servers from
        /// ``start(model:alias:runtime:contextLength:extraArguments:readyTimeout:records:)`` are.
        public static func startTranscription(
            model: URL, runtime: TranscriptionServerRuntime? = nil, readyTimeout: Duration = .seconds(120),
            records: RuntimeRecords? = RuntimeRecords(cache: HubCache())
        ) async throws -> LocalModelServer {
            var found = runtime
            if found == nil { found = try await BlockingWork.run { TranscriptionServerRuntime.find() } }
            guard let runtime = found else {
                throw ModelDepotError(.unavailable, TranscriptionServerRuntime.installHint)
            }
            let port = try freePort()
            let (executable, arguments) = runtime.command(model: model, port: port)
            return try await launch(
                executable, arguments, model: model, port: port, runtimeDescription: "\(runtime)",
                readyTimeout: readyTimeout, records: records)
        }

        private static func freePort() throws -> Int {
            do {
                return try LoopbackPort.unused()
            } catch {
                throw ModelDepotError(.unavailable, "Cannot find a free port on 127.0.0.1: \(error).")
            }
        }

        private static func launch(
            _ executable: URL, _ arguments: [String], model: URL, port: Int, runtimeDescription: String,
            readyTimeout: Duration, records: RuntimeRecords?
        ) async throws -> LocalModelServer {
            guard FileManager.default.fileExists(atPath: model.path) else {
                throw ModelDepotError(.unavailable, "The model \(model.path) does not exist.")
            }
            // Servers an earlier process left running (it was killed, or crashed) hold ports and memory.
            await records?.reap(grace: stopGrace)
            let logFile = FileManager.default.temporaryDirectory.appendingPathComponent(
                "modeldepot-server-\(ProcessInfo.processInfo.processIdentifier)-\(port).log")
            let process: ChildProcess
            do {
                // The marker scripts/check-runtimes looks for: it flags only processes ModelDepot started.
                process = try ChildProcess(
                    executable: executable.path, arguments: arguments, output: logFile.path,
                    environment: [runtimeMarker: "\(ProcessInfo.processInfo.processIdentifier)"])
            } catch {
                throw ModelDepotError(.unavailable, "\(error).")
            }
            records?.add(process, port: port, runtime: runtimeDescription)
            let server = LocalModelServer(
                process: process, records: records, baseURL: URL(string: "http://127.0.0.1:\(port)/v1")!,
                runtimeDescription: runtimeDescription, logFile: logFile)
            do {
                try await server.waitUntilReady(timeout: readyTimeout)
            } catch {
                await server.stop()
                throw error
            }
            return server
        }

        /// The environment variable every runtime gets, set to the id of the process that started it: runtimes (and
        /// whatever they start) are told apart from programs of the same name started by someone else
        /// (`scripts/check-runtimes` flags only those that carry it and whose starter is no longer an ancestor).
        public static let runtimeMarker = "MODELDEPOT_RUNTIME_OF"

        /// How long a server may take to stop after SIGTERM before it gets SIGKILL: servers finish open replies
        /// first, and one stuck in a reply must not hold up the stop.
        public static let stopGrace: Duration = .seconds(5)

        /// Stops the server and whatever it started: SIGTERM to its process group, SIGKILL after ``stopGrace``,
        /// and returns once it has ended (checking every 20 ms, holding no thread meanwhile).
        public func stop() async {
            await process.stop(grace: Self.stopGrace)
            finish()
        }

        /// ``stop()`` for a process about to exit (a signal handler, `exit`), which cannot suspend: blocks the
        /// calling thread until the server has ended, for at most `grace` and a moment (SIGKILL then).
        public func stopBeforeExit(grace: Duration = .seconds(2)) {
            process.stopBlocking(grace: grace)
            finish()
        }

        private func finish() {
            records?.remove(pid: process.pid)
            try? FileManager.default.removeItem(at: logFile)
        }

        /// The last lines the server printed, for error messages.
        public func logTail(lines: Int = 15) -> String {
            let text = (try? String(contentsOf: logFile, encoding: .utf8)) ?? ""
            return text.split(separator: "\n", omittingEmptySubsequences: false).suffix(lines).joined(separator: "\n")
        }

        private func waitUntilReady(timeout: Duration) async throws {
            let deadline = ContinuousClock.now + timeout
            let probe = TransportRequest(url: baseURL.appendingPathComponent("models"))
            while ContinuousClock.now < deadline {
                if let status = process.exitStatus {
                    throw ModelDepotError(
                        .unavailable,
                        "\(runtimeDescription) exited before it was ready (status \(status)). Its output:\n\(logTail())"
                    )
                }
                // Any answer means it listens (a server started with an API key answers 401 to a bare probe).
                if let response = try? await OpenAICompatibleProvider.localTransport.send(probe) {
                    for try await _ in response.body {}
                    return
                }
                try await Task.sleep(for: .milliseconds(100))
            }
            throw ModelDepotError(
                .unavailable,
                "\(runtimeDescription) did not answer within \(timeout.components.seconds) s. Its output:\n\(logTail())"
            )
        }
    }
#endif
