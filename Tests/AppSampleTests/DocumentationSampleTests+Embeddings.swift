import Foundation
import ModelDepot
import ModelDepotEmbeddings

// The code samples of "Embedding text on the device" (Sources/ModelDepot/ModelDepot.docc), kept here so they
// compile. They need the internet, so they are compiled, not run.

enum EmbeddingTextOnTheDeviceSamples {
    static func loadAModelTheManagerReportsReady() async throws -> SentenceEmbedder {
        let models = try ModelManager()
        let catalog = try ModelCatalog.builtIn()
        let entry = catalog.entry(named: "all-minilm-l6-v2")!
        _ = try await models.download(entry).result()

        let embedder = try SentenceEmbedder(entry, in: models)
        let vector = try await embedder.embed("Hello world")  // 384 floats, unit length
        _ = vector
        return embedder
    }

    static func embedManyTexts(_ documents: [String], embedder: SentenceEmbedder) async throws -> [[Float]] {
        let vectors = try await embedder.embed(batch: documents) { done, total in
            print("\(done) of \(total)")
        }
        return vectors
    }

    static func search(_ documents: [String], vectors: [[Float]], embedder: SentenceEmbedder) async throws {
        let query = try await embedder.embed("Where do I keep the cat food?")
        for match in nearest(to: query, in: vectors, count: 3) {
            print(documents[match.index], match.similarity)
        }
    }

    static func index(_ documents: [String], with embedder: any TextEmbedder) async throws -> [[Float]] {
        try await embedder.embed(documents)
    }
}
