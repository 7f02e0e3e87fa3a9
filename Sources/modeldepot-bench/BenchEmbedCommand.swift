import ArgumentParser
import Foundation
import ModelDepotEmbeddings

/// Measures the in-process sentence encoder, warm (model loaded), tokenization included: single-sentence
/// latency, batch-32 throughput, the achieved GFLOP/s beside the multiply's own, for the system BLAS and for
/// portable Swift. Used by bench/embeddings.sh.
struct BenchEmbedCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "embed", abstract: "Benchmark the in-process sentence encoder.")

    @Option(help: "The model folder (a sentence-transformers BERT).")
    var folder: String

    @Option(help: "Measured single-sentence runs.")
    var runs: Int = 30

    @Option(help: "A file of texts, one a line: the batch (the first 32 are used).")
    var batchFile: String

    @Option(help: "The short sentence for the latency measurement.")
    var sentence = "The quick brown fox jumps over the lazy dog near the river."

    @Option(help: "Which arithmetic to measure (repeatable; default: each). One per process gives its own peak RSS.")
    var arithmetic: [EmbeddingArithmetic] = EmbeddingArithmetic.allCases

    struct Result: Encodable {
        var arithmetic: String
        var loadSeconds: Double
        var singleMilliseconds: Double
        var singleTokens: Int
        var batchSentencesPerSecond: Double
        var batchTokensPerSentence: Double
        var achievedGFLOPS: Double
        var multiplyGFLOPS: Double
    }

    func run() async throws {
        let batch = Array(
            try String(contentsOfFile: batchFile, encoding: .utf8).split(separator: "\n").map(String.init).prefix(32))
        var results: [Result] = []
        for arithmetic in self.arithmetic {
            let clock = ContinuousClock()
            let start = clock.now
            let embedder = try SentenceEmbedder(folder: URL(fileURLWithPath: folder), arithmetic: arithmetic)
            let load = clock.now - start
            _ = try await embedder.embed(sentence)
            var singles: [Double] = []
            for _ in 0..<runs {
                let began = clock.now
                _ = try await embedder.embed(sentence)
                singles.append((clock.now - began).milliseconds)
            }
            var best = Duration.seconds(1000)
            for _ in 0..<3 {
                let began = clock.now
                _ = try await embedder.embed(batch: batch)
                best = min(best, clock.now - began)
            }
            let tokens = batch.map { embedder.tokenizer.encode($0).ids.count }
            let flops = tokens.reduce(0.0) { $0 + Self.flops(tokens: $1, embedder: embedder) }
            results.append(
                Result(
                    arithmetic: embedder.arithmetic, loadSeconds: load.milliseconds / 1000,
                    singleMilliseconds: singles.sorted()[singles.count / 2],
                    singleTokens: embedder.tokenizer.encode(sentence).ids.count,
                    batchSentencesPerSecond: Double(batch.count) / (best.milliseconds / 1000),
                    batchTokensPerSentence: Double(tokens.reduce(0, +)) / Double(tokens.count),
                    achievedGFLOPS: flops / (best.milliseconds / 1000) / 1e9,
                    multiplyGFLOPS: embedder.multiplyGFLOPS()))
        }
        printJSON(results)
    }

    /// Multiply-adds ×2 of one sentence of `tokens` tokens: the linear layers and the attention products.
    static func flops(tokens n: Int, embedder: SentenceEmbedder) -> Double {
        let h = Double(embedder.dimensions)
        let i = 4 * h
        let layers = Double(embedder.layerCount)
        let n = Double(n)
        return layers * 2 * (n * (4 * h * h + 2 * h * i) + 2 * n * n * h)
    }
}

extension EmbeddingArithmetic: ExpressibleByArgument {}
