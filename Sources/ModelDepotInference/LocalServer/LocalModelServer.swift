#if os(Linux) || os(macOS)
    import Foundation
    import ModelDepot
    import ModelDepotPlatform

    /// A local OpenAI-compatible server for a GGUF file, started on `127.0.0.1` and stopped when done.
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
        public let runtime: LocalServerRuntime
        /// Where the server's own output goes (its last lines explain a failed start).
        public let logFile: URL
        private let process: ChildProcess

        /// The server process's id.
        public var processIdentifier: Int32 { process.pid }
        public var isRunning: Bool { process.isRunning }

        private init(process: ChildProcess, baseURL: URL, runtime: LocalServerRuntime, logFile: URL) {
            self.process = process
            self.baseURL = baseURL
            self.runtime = runtime
            self.logFile = logFile
        }

        /// Starts `runtime` (found with ``LocalServerRuntime/find(environment:)`` when nil) on a free port and
        /// returns once it answers `GET /v1/models`. `extraArguments` go to the server program as they are (an
        /// API key, GPU layers).
        public static func start(
            model: URL, alias: String, runtime: LocalServerRuntime? = nil, contextLength: Int = 4096,
            extraArguments: [String] = [], readyTimeout: Duration = .seconds(120)
        ) async throws -> LocalModelServer {
            guard let runtime = runtime ?? LocalServerRuntime.find() else {
                throw ModelDepotError(.unavailable, LocalServerRuntime.installHint)
            }
            guard FileManager.default.fileExists(atPath: model.path) else {
                throw ModelDepotError(.unavailable, "The model file \(model.path) does not exist.")
            }
            let port: Int
            do {
                port = try LoopbackPort.unused()
            } catch {
                throw ModelDepotError(.unavailable, "Cannot find a free port on 127.0.0.1: \(error).")
            }
            let (executable, arguments) = runtime.command(
                model: model, alias: alias, port: port, contextLength: contextLength)
            let logFile = FileManager.default.temporaryDirectory.appendingPathComponent(
                "modeldepot-server-\(ProcessInfo.processInfo.processIdentifier)-\(port).log")
            let process: ChildProcess
            do {
                process = try ChildProcess(
                    executable: executable.path, arguments: arguments + extraArguments, output: logFile.path)
            } catch {
                throw ModelDepotError(.unavailable, "\(error).")
            }
            let server = LocalModelServer(
                process: process, baseURL: URL(string: "http://127.0.0.1:\(port)/v1")!, runtime: runtime,
                logFile: logFile)
            do {
                try await server.waitUntilReady(timeout: readyTimeout)
            } catch {
                await server.stop()
                throw error
            }
            return server
        }

        /// Stops the server: SIGTERM, then SIGKILL if it has not exited within 5 seconds.
        public func stop() async {
            defer { try? FileManager.default.removeItem(at: logFile) }
            process.signal(SIGTERM)
            // Servers finish open replies before exiting on SIGTERM; one stuck in a reply gets SIGKILL.
            let deadline = ContinuousClock.now + .seconds(5)
            while process.isRunning, ContinuousClock.now < deadline {
                try? await Task.sleep(for: .milliseconds(20))
            }
            process.signal(SIGKILL)
            await process.waitForExit()
        }

        /// Sends SIGTERM and returns at once: for a process about to exit (a signal handler), which cannot wait.
        public func terminateNow() {
            process.signal(SIGTERM)
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
                        "\(runtime) exited before it was ready (status \(status)). Its output:\n\(logTail())")
                }
                // Any answer means it listens (a server started with an API key answers 401 to a bare probe).
                if let response = try? await OpenAICompatibleProvider.sharedTransport.send(probe) {
                    for try await _ in response.body {}
                    return
                }
                try await Task.sleep(for: .milliseconds(100))
            }
            throw ModelDepotError(
                .unavailable,
                "\(runtime) did not answer within \(timeout.components.seconds) s. Its output:\n\(logTail())")
        }
    }
#endif
