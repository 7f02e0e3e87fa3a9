#if os(Linux) || os(macOS)
    import ArgumentParser
    import Foundation
    import ModelDepot
    import ModelDepotEmbeddings
    import ModelDepotInference

    struct EmbedCommand: AsyncParsableCommand, ReportsFailuresAsJSON {
        static let configuration = CommandConfiguration(
            commandName: "embed",
            abstract: "Compute embeddings of texts, or the cosine similarity of two.",
            discussion: """
                Prints one line per text: its vector's values separated by spaces (--json: one object with every \
                vector). --similarity prints the cosine similarity of the two texts' vectors, -1 to 1. With --local, \
                a BERT-family safetensors model (all-minilm-l6-v2, gte-small) runs in this process; a GGUF model \
                runs in a local llama.cpp server.
                """)

        @OptionGroup var inference: InferenceOptions

        @Flag(help: "Print the cosine similarity of exactly two texts.")
        var similarity = false

        @Flag(help: "Print JSON.")
        var json = false

        @Option(help: "A file of texts to embed, one a line (empty lines skipped), after any given as arguments.")
        var batchFile: String?

        @Argument(help: "The texts.")
        var texts: [String] = []

        func validate() throws {
            if texts.isEmpty && batchFile == nil {
                throw ValidationError("Give at least one text, or --batch-file FILE.")
            }
            if similarity && (texts.count != 2 || batchFile != nil) {
                throw ValidationError("--similarity compares exactly two texts given as arguments.")
            }
        }

        /// The arguments, then the batch file's lines.
        func allTexts() throws -> [String] {
            guard let batchFile else { return texts }
            guard let contents = try? String(contentsOfFile: batchFile, encoding: .utf8) else {
                throw ModelDepotError(
                    .invalidArgument, "Cannot read \(batchFile) as UTF-8 text; give a file of one text a line.")
            }
            return texts + contents.split(whereSeparator: \.isNewline).map(String.init).filter { !$0.isEmpty }
        }

        struct VectorOutput: Encodable {
            var text: String
            var dimensions: Int
            var vector: [Float]
        }

        struct SimilarityOutput: Encodable {
            var texts: [String]
            var similarity: Double
        }

        func run() async throws {
            let texts = try allTexts()
            let vectors: [[Float]]
            if let embedder = try inProcessEmbedder() {
                // A bar on a terminal for a batch file; nothing for a few texts or in scripts.
                let showsProgress = batchFile != nil && isatty(STDERR_FILENO) == 1 && !json
                vectors = try await CancellableRun.run {
                    try await embedder.embed(batch: texts) { done, total in
                        guard showsProgress else { return }
                        let filled = done * 24 / max(1, total)
                        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: 24 - filled)
                        StandardStreams.error(
                            Data("\r[\(bar)] \(done)/\(total) texts\(done == total ? "\n" : "")".utf8))
                    }
                }
            } else {
                vectors = try await inference.withProvider { provider in
                    try await CancellableRun.run { try await provider.embed(texts) }
                }
            }
            if similarity {
                guard let value = cosineSimilarity(vectors[0], vectors[1]) else {
                    throw ModelDepotError(
                        .protocolViolation,
                        "The server sent vectors of different lengths or all zeros; their similarity is undefined.")
                }
                if json {
                    printJSON(SimilarityOutput(texts: texts, similarity: value))
                } else {
                    print(String(format: "%.6f", value))
                }
                return
            }
            if json {
                printJSON(zip(texts, vectors).map { VectorOutput(text: $0, dimensions: $1.count, vector: $1) })
            } else {
                for vector in vectors { print(vector.map { "\($0)" }.joined(separator: " ")) }
            }
        }
    }

    extension EmbedCommand {
        var failuresAsJSON: Bool { json }

        /// The in-process encoder, for `--local` with a catalog embedding model in safetensors; nil for the rest.
        func inProcessEmbedder() throws -> SentenceEmbedder? {
            guard let name = inference.local, let entry = try inference.catalogOptions.load().entry(named: name),
                entry.format != .gguf
            else { return nil }
            if let reason = SentenceEmbedder.unsupportedReason(for: entry) {
                throw ModelDepotError(.invalidArgument, "\(name) cannot be embedded in this process: \(reason).")
            }
            let embedder = try SentenceEmbedder(entry, in: inference.cacheOptions.manager())
            printStatus(
                "\(name): in-process BERT encoder, \(embedder.dimensions) dimensions, texts cut at \(embedder.maxSequenceLength) tokens, arithmetic: \(embedder.arithmetic)"
            )
            return embedder
        }
    }
#endif
