#if os(Linux) || os(macOS)
    import ArgumentParser
    import Dispatch
    import Foundation
    import ModelDepot
    import ModelDepotInference
    import Synchronization

    struct ChatCommand: AsyncParsableCommand, ReportsFailuresAsJSON {
        static let configuration = CommandConfiguration(
            commandName: "chat",
            abstract: "Chat with a model through an OpenAI-compatible server, or a downloaded model served locally.",
            discussion: """
                With --prompt: one reply, streamed to stdout (--json: one JSON object when it is done). Without: an \
                interactive chat that keeps the conversation; Ctrl-C stops a reply without quitting, /reset forgets \
                the conversation, /exit or Ctrl-D quits. Speed and time to first token go to stderr.
                --local NAME serves a downloaded catalog GGUF model with llama.cpp's llama-server or \
                llama-cpp-python (python -m llama_cpp.server) on 127.0.0.1 and stops it afterwards.
                """)

        @OptionGroup var inference: InferenceOptions

        @Option(help: "A system message that starts the conversation.")
        var system: String?

        @Option(help: "Sampling preset: default, precise, creative or code.")
        var preset: String = "default"

        @Option(help: "Sampling temperature, 0 to 2 (overrides the preset).")
        var temperature: Double?

        @Option(help: "The longest reply, in tokens (overrides the preset).")
        var maxTokens: Int?

        @Option(help: "Text that ends a reply (repeatable).")
        var stop: [String] = []

        @Option(help: "One message to answer; without it the chat is interactive.")
        var prompt: String?

        @Flag(help: "With --prompt: print the reply and its measurements as one JSON object.")
        var json = false

        struct Output: Encodable {
            var text: String
            var finishReason: String?
            var tokens: Int
            var promptTokens: Int?
            var timeToFirstTokenMs: Double?
            var tokensPerSecond: Double?
            var durationMs: Double
        }

        func config() throws -> GenerationConfig {
            let presets: [String: GenerationConfig] = [
                "default": .default, "precise": .precise, "creative": .creative, "code": .code,
            ]
            guard var config = presets[preset] else {
                throw ModelDepotError(
                    .invalidArgument, "'\(preset)' is not a preset; use default, precise, creative or code.")
            }
            if let temperature { config = config.temperature(temperature) }
            if let maxTokens { config = config.maxTokens(maxTokens) }
            if !stop.isEmpty { config = config.stopSequences(stop) }
            if let problem = config.problem { throw ModelDepotError(.invalidArgument, "Invalid settings: \(problem).") }
            return config
        }

        func run() async throws {
            let config = try config()
            let initial = system.map { [ChatMessage.system($0)] } ?? []
            try await inference.withProvider { provider in
                if let prompt {
                    try await answerOnce(prompt, history: initial, provider: provider, config: config)
                } else {
                    try await converse(history: initial, provider: provider, config: config)
                }
            }
        }

        private func answerOnce(
            _ prompt: String, history: [ChatMessage], provider: OpenAICompatibleProvider, config: GenerationConfig
        ) async throws {
            let stream = provider.stream(messages: history + [.user(prompt)], config: config)
            if json {
                let reply = try await CancellableRun.run { try await stream.collect() }
                printJSON(
                    Output(
                        text: reply.text, finishReason: reply.finishReason?.rawValue, tokens: reply.tokenCount,
                        promptTokens: reply.usage?.promptTokens,
                        timeToFirstTokenMs: reply.timeToFirstToken?.milliseconds,
                        tokensPerSecond: reply.tokensPerSecond, durationMs: reply.duration.milliseconds))
                return
            }
            do {
                let reply = try await CancellableRun.run { try await Self.print(stream) }
                printStatus(Self.summary(of: reply))
            } catch let failure as ReplyFailure {
                throw failure.underlying
            }
        }

        private func converse(history: [ChatMessage], provider: OpenAICompatibleProvider, config: GenerationConfig)
            async throws
        {
            var history = history
            let current = Mutex<Task<Generation, any Error>?>(nil)
            // Ctrl-C stops the reply being written; at the prompt it quits. SIGTERM and SIGHUP quit. Quitting
            // stops a local server first.
            signal(SIGINT, SIG_IGN)
            let interrupt = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
            interrupt.setEventHandler {
                guard let reply = current.withLock({ $0 }) else {
                    printStatus("")
                    ExitCleanup.exit(130)
                }
                reply.cancel()
            }
            let terminations = [SIGTERM, SIGHUP].map { number -> any DispatchSourceSignal in
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                source.setEventHandler { ExitCleanup.exit(128 + number) }
                return source
            }
            let sources = [interrupt] + terminations
            sources.forEach { $0.resume() }
            defer { sources.forEach { $0.cancel() } }
            printStatus(
                "Chatting with \(provider.model ?? "the server's model") at \(provider.baseURL.absoluteString). /reset forgets, /exit quits."
            )
            while true {
                StandardStreams.output(Data("> ".utf8))
                guard let line = readLine() else { break }
                let message = line.trimmingCharacters(in: .whitespaces)
                if message.isEmpty { continue }
                if message == "/exit" || message == "/quit" { break }
                if message == "/reset" {
                    history.removeAll { $0.role != .system }
                    printStatus("(conversation forgotten)")
                    continue
                }
                history.append(.user(message))
                let stream = provider.stream(messages: history, config: config)
                let task = Task { try await Self.print(stream) }
                current.withLock { $0 = task }
                let outcome = await task.result
                current.withLock { $0 = nil }
                switch outcome {
                case .success(let reply):
                    history.append(.assistant(reply.text))
                    printStatus(Self.summary(of: reply))
                case .failure(let error as ReplyFailure):
                    // What arrived stays in the conversation: the model sees its own stopped reply next turn.
                    if !error.partial.isEmpty { history.append(.assistant(error.partial)) }
                    if error.underlying.code == .cancelled {
                        printStatus("[stopped]")
                    } else {
                        printStatus("error: \(error.underlying.message)")
                        if error.partial.isEmpty { history.removeLast() }
                    }
                case .failure(let error):
                    printStatus("error: \(error)")
                    history.removeLast()
                }
            }
        }

        /// A reply that failed or was stopped, with the text that had arrived.
        struct ReplyFailure: Error {
            var partial: String
            var underlying: ModelDepotError
        }

        /// Streams a reply to stdout as it arrives; returns it whole.
        static func print(_ stream: GenerationStream) async throws -> Generation {
            var text = ""
            var last: GenerationChunk?
            do {
                for try await chunk in stream {
                    text += chunk.text
                    last = chunk
                    StandardStreams.output(Data(chunk.text.utf8))
                }
            } catch let error as ModelDepotError {
                if !text.isEmpty { StandardStreams.output(Data("\n".utf8)) }
                throw ReplyFailure(partial: text, underlying: error)
            }
            StandardStreams.output(Data("\n".utf8))
            return Generation(text: text, last: last)
        }

        static func summary(of reply: Generation) -> String {
            var parts = ["\(reply.tokenCount) tokens"]
            if let ttft = reply.timeToFirstToken {
                parts.append(String(format: "first token %.1f ms", ttft.milliseconds))
            }
            if let speed = reply.tokensPerSecond { parts.append(String(format: "%.1f tokens/s", speed)) }
            if let reason = reply.finishReason { parts.append("finish: \(reason)") }
            return "[" + parts.joined(separator: " · ") + "]"
        }
    }

    extension Duration {
        var milliseconds: Double {
            Double(components.seconds) * 1000 + Double(components.attoseconds) / 1e15
        }
    }

    extension ChatCommand {
        var failuresAsJSON: Bool { json }
    }
#endif
