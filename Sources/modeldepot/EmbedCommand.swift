import ArgumentParser
import Foundation
import ModelDepot
import ModelDepotInference

struct EmbedCommand: AsyncParsableCommand, ReportsFailuresAsJSON {
    static let configuration = CommandConfiguration(
        commandName: "embed",
        abstract: "Compute embeddings of texts, or the cosine similarity of two.",
        discussion: """
            Prints one line per text: its vector's values separated by spaces (--json: one object with every \
            vector). --similarity prints the cosine similarity of the two texts' vectors, -1 to 1.
            """)

    @OptionGroup var inference: InferenceOptions

    @Flag(help: "Print the cosine similarity of exactly two texts.")
    var similarity = false

    @Flag(help: "Print JSON.")
    var json = false

    @Argument(help: "The texts.")
    var texts: [String]

    func validate() throws {
        if texts.isEmpty { throw ValidationError("Give at least one text.") }
        if similarity && texts.count != 2 { throw ValidationError("--similarity compares exactly two texts.") }
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
        let vectors = try await inference.withProvider { provider in
            try await CancellableRun.run { try await provider.embed(texts) }
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
}
