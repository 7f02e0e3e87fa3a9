import Foundation
import ModelDepotCore

/// The hyperparameters of a BERT model, from its `config.json`.
struct BertConfiguration: Equatable, Sendable {
    var vocabularySize: Int
    var hiddenSize: Int
    var layers: Int
    var attentionHeads: Int
    var intermediateSize: Int
    var maxPositions: Int
    var typeVocabularySize: Int
    var layerNormEpsilon: Float

    init(url: URL) throws {
        let object = try WordPieceTokenizer.jsonObject(at: url)
        func integer(_ key: String) throws -> Int {
            guard let value = object[key] as? Int, value > 0 else {
                throw ModelDepotError(
                    .invalidModelFile, "config.json lacks a positive '\(key)'; it does not describe a BERT model.")
            }
            return value
        }
        let type = object["model_type"] as? String ?? "unknown"
        guard ["bert", "distilbert"].contains(type) || type == "unknown" && object["hidden_size"] != nil else {
            throw ModelDepotError(
                .invalidModelFile,
                "config.json describes a '\(type)' model; the in-process encoder runs BERT models (all-MiniLM-L6-v2, gte-small). Use a llama.cpp server for others."
            )
        }
        guard (object["hidden_act"] as? String ?? "gelu") == "gelu" else {
            throw ModelDepotError(
                .invalidModelFile,
                "config.json's hidden_act is \(object["hidden_act"] ?? ""); only BERT's gelu is supported.")
        }
        vocabularySize = try integer("vocab_size")
        hiddenSize = try integer("hidden_size")
        layers = try integer("num_hidden_layers")
        attentionHeads = try integer("num_attention_heads")
        intermediateSize = try integer("intermediate_size")
        maxPositions = try integer("max_position_embeddings")
        typeVocabularySize = object["type_vocab_size"] as? Int ?? 2
        layerNormEpsilon = Float(object["layer_norm_eps"] as? Double ?? 1e-12)
        guard hiddenSize % attentionHeads == 0 else {
            throw ModelDepotError(
                .invalidModelFile,
                "config.json's hidden_size \(hiddenSize) is not a multiple of its \(attentionHeads) attention heads.")
        }
    }
}

/// BERT's encoder: embeddings, then self-attention layers, giving one vector per token.
struct BertEncoder: Sendable {
    struct Layer: Sendable {
        /// Query, key and value weights stacked (`3·hidden × hidden`): one multiply makes all three.
        var queryKeyValue, attentionOutput, intermediate, output: FloatTensor
        var queryKeyValueBias, attentionOutputBias, intermediateBias, outputBias: FloatTensor
        var attentionNormWeight, attentionNormBias, outputNormWeight, outputNormBias: FloatTensor
    }

    let configuration: BertConfiguration
    let wordEmbeddings: FloatTensor
    let positionEmbeddings: FloatTensor
    let tokenTypeEmbeddings: FloatTensor
    let embeddingNormWeight: FloatTensor
    let embeddingNormBias: FloatTensor
    let layers: [Layer]
    let multiplier: any MatrixMultiplier

    init(configuration: BertConfiguration, weights: SafetensorsWeights, multiplier: any MatrixMultiplier) throws {
        let h = configuration.hiddenSize
        let i = configuration.intermediateSize
        self.configuration = configuration
        self.multiplier = multiplier
        wordEmbeddings = try weights.tensor(
            "embeddings.word_embeddings.weight", shape: [configuration.vocabularySize, h])
        positionEmbeddings = try weights.tensor(
            "embeddings.position_embeddings.weight", shape: [configuration.maxPositions, h])
        tokenTypeEmbeddings = try weights.tensor(
            "embeddings.token_type_embeddings.weight", shape: [configuration.typeVocabularySize, h])
        embeddingNormWeight = try weights.tensor("embeddings.LayerNorm.weight", shape: [h])
        embeddingNormBias = try weights.tensor("embeddings.LayerNorm.bias", shape: [h])
        layers = try (0..<configuration.layers).map { index in
            let p = "encoder.layer.\(index)."
            return Layer(
                queryKeyValue: FloatTensor(
                    concatenating: try ["query", "key", "value"].map {
                        try weights.tensor(p + "attention.self.\($0).weight", shape: [h, h])
                    }),
                attentionOutput: try weights.tensor(p + "attention.output.dense.weight", shape: [h, h]),
                intermediate: try weights.tensor(p + "intermediate.dense.weight", shape: [i, h]),
                output: try weights.tensor(p + "output.dense.weight", shape: [h, i]),
                queryKeyValueBias: FloatTensor(
                    concatenating: try ["query", "key", "value"].map {
                        try weights.tensor(p + "attention.self.\($0).bias", shape: [h])
                    }),
                attentionOutputBias: try weights.tensor(p + "attention.output.dense.bias", shape: [h]),
                intermediateBias: try weights.tensor(p + "intermediate.dense.bias", shape: [i]),
                outputBias: try weights.tensor(p + "output.dense.bias", shape: [h]),
                attentionNormWeight: try weights.tensor(p + "attention.output.LayerNorm.weight", shape: [h]),
                attentionNormBias: try weights.tensor(p + "attention.output.LayerNorm.bias", shape: [h]),
                outputNormWeight: try weights.tensor(p + "output.LayerNorm.weight", shape: [h]),
                outputNormBias: try weights.tensor(p + "output.LayerNorm.bias", shape: [h]))
        }
    }

    /// The last hidden states of several sequences at once: for each, `ids.count × hiddenSize` floats,
    /// row-major. The sequences are padded to the longest into one matrix, so every linear layer is one large
    /// multiply; attention is computed per sequence over its own tokens only, so padding changes nothing.
    func encode(_ sequences: [[Int]]) throws -> [[Float]] {
        let h = configuration.hiddenSize
        let n = sequences.map(\.count).max() ?? 0
        guard n > 0 else { return sequences.map { _ in [] } }
        guard n <= configuration.maxPositions else {
            throw ModelDepotError(
                .invalidArgument, "\(n) tokens exceed the model's \(configuration.maxPositions) positions.")
        }
        let rows = sequences.count * n
        var x = [Float](repeating: 0, count: rows * h)
        for (index, ids) in sequences.enumerated() {
            for (position, id) in ids.enumerated() {
                guard (0..<configuration.vocabularySize).contains(id) else {
                    throw ModelDepotError(.invalidArgument, "Token id \(id) is outside the model's vocabulary.")
                }
                let row = (index * n + position) * h
                for d in 0..<h {
                    x[row + d] =
                        wordEmbeddings[id * h + d] + positionEmbeddings[position * h + d] + tokenTypeEmbeddings[d]
                }
            }
        }
        MatrixMath.layerNorm(
            &x, rows: rows, width: h, gamma: embeddingNormWeight, beta: embeddingNormBias,
            epsilon: configuration.layerNormEpsilon)
        let lengths = sequences.map(\.count)
        for layer in layers {
            try Task.checkCancellation()
            x = apply(layer, to: x, rows: rows, padded: n, lengths: lengths)
        }
        return lengths.enumerated().map { index, length in Array(x[(index * n * h)..<((index * n + length) * h)]) }
    }

    /// `x · weightᵀ + bias`, `weight` being `bias.count × inner` as PyTorch stores it.
    private func linear(_ x: [Float], rows: Int, inner: Int, weight: FloatTensor, bias: FloatTensor) -> [Float] {
        let columns = bias.count
        var y = [Float](repeating: 0, count: rows * columns)
        x.withUnsafeBufferPointer { x in
            y.withUnsafeMutableBufferPointer { y in
                multiplier.multiply(
                    rows: rows, columns: columns, inner: inner, MatrixView(base: x.baseAddress!, rowStride: inner),
                    weight.matrix(width: inner), transposedB: true, into: y.baseAddress!, rowStride: columns)
            }
        }
        MatrixMath.addBias(&y, rows: rows, bias: bias)
        return y
    }

    private func apply(_ layer: Layer, to x: [Float], rows n: Int, padded: Int, lengths: [Int]) -> [Float] {
        let h = configuration.hiddenSize
        let qkv = linear(x, rows: n, inner: h, weight: layer.queryKeyValue, bias: layer.queryKeyValueBias)
        let context = attention(qkv: qkv, padded: padded, lengths: lengths)
        var attended = linear(
            context, rows: n, inner: h, weight: layer.attentionOutput, bias: layer.attentionOutputBias)
        MatrixMath.add(x, to: &attended)
        MatrixMath.layerNorm(
            &attended, rows: n, width: h, gamma: layer.attentionNormWeight, beta: layer.attentionNormBias,
            epsilon: configuration.layerNormEpsilon)
        var inner = linear(
            attended, rows: n, inner: h, weight: layer.intermediate, bias: layer.intermediateBias)
        MatrixMath.gelu(&inner)
        var output = linear(
            inner, rows: n, inner: configuration.intermediateSize, weight: layer.output, bias: layer.outputBias)
        MatrixMath.add(attended, to: &output)
        MatrixMath.layerNorm(
            &output, rows: n, width: h, gamma: layer.outputNormWeight, beta: layer.outputNormBias,
            epsilon: configuration.layerNormEpsilon)
        return output
    }

    /// Multi-head self-attention of each sequence over its own tokens: per head, softmax(q·kᵀ/√d) times v, both
    /// products by the multiplier. `qkv` holds each row's query, key and value side by side (`3·width` wide), so
    /// one head's queries are a strided view of it. Sequence `b` occupies rows `b·padded ..< b·padded +
    /// lengths[b]`; padding rows stay zero.
    func attention(qkv: [Float], padded: Int, lengths: [Int]) -> [Float] {
        let h = configuration.hiddenSize
        let d = h / configuration.attentionHeads
        let scale = 1 / Float(d).squareRoot()
        let stride = 3 * h
        var context = [Float](repeating: 0, count: lengths.count * padded * h)
        var scores = [Float](repeating: 0, count: padded * padded)
        qkv.withUnsafeBufferPointer { qkv in
            context.withUnsafeMutableBufferPointer { context in
                scores.withUnsafeMutableBufferPointer { scores in
                    for (sequence, n) in lengths.enumerated() where n > 0 {
                        let firstRow = sequence * padded
                        for head in 0..<configuration.attentionHeads {
                            let queries = qkv.baseAddress! + firstRow * stride + head * d
                            multiplier.multiply(
                                rows: n, columns: n, inner: d, MatrixView(base: queries, rowStride: stride),
                                MatrixView(base: queries + h, rowStride: stride), transposedB: true,
                                into: scores.baseAddress!, rowStride: n)
                            MatrixMath.softmax(rows: scores.baseAddress!, count: n, width: n, scale: scale)
                            multiplier.multiply(
                                rows: n, columns: d, inner: n, MatrixView(base: scores.baseAddress!, rowStride: n),
                                MatrixView(base: queries + 2 * h, rowStride: stride), transposedB: false,
                                into: context.baseAddress! + firstRow * h + head * d, rowStride: h)
                        }
                    }
                }
            }
        }
        return context
    }
}
