import ModelDepot

extension SentenceEmbedder {
    /// Why the in-process encoder cannot run `entry`, from the catalog alone (nothing is downloaded); nil when
    /// it can: a BERT-family embedding model with safetensors weights and a WordPiece tokenizer
    /// (all-minilm-l6-v2, gte-small).
    public static func unsupportedReason(for entry: CatalogEntry) -> String? {
        guard entry.has(.embeddings) else { return "it is not an embedding model" }
        if entry.files.contains("sentencepiece.bpe.model") {
            return
                "it is XLM-RoBERTa with a SentencePiece tokenizer and PyTorch pickle weights (\(entry.files.first { $0.hasSuffix(".bin") } ?? "pytorch_model.bin")); the in-process encoder runs BERT models with WordPiece and safetensors, so use it through a llama.cpp server with a GGUF conversion"
        }
        guard entry.format == .safetensors else {
            return "its weights are \(entry.format.rawValue); the in-process encoder reads safetensors"
        }
        let needed = ["config.json", "model.safetensors"]
        if let missing = needed.first(where: { !entry.files.contains($0) }) {
            return "the entry does not pull \(missing)"
        }
        guard entry.files.contains("tokenizer.json") || entry.files.contains("vocab.txt") else {
            return "the entry pulls no WordPiece vocabulary (tokenizer.json or vocab.txt)"
        }
        return nil
    }
}
