#if os(Linux) || os(macOS)
    import Foundation
    import ModelDepotCore

    /// The demo's runnable miniatures, generated here so a fresh clone with nothing installed has them: a BERT
    /// sentence encoder (random weights, 32 wide) that the in-process encoder runs, and a llama-architecture chat
    /// model (random weights, 64 wide) that llama.cpp's server runs. Their answers mean nothing; the plumbing
    /// around them — download, load, use, unload — is real. Seeded: the same bytes every run.
    enum DemoModels {
        /// A BERT checkpoint in sentence-transformers' layout: `config.json`, `vocab.txt`,
        /// `tokenizer_config.json`, `modules.json` (mean pooling, then Normalize), `1_Pooling/config.json` and
        /// `model.safetensors` (F32), by path.
        static func sentenceEncoder() -> [String: [UInt8]] {
            let hidden = 32
            let layers = 2
            let inner = 64
            let positions = 128
            let vocabulary =
                ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", ",", "!", "?", "'"]
                + Array("abcdefghijklmnopqrstuvwxyz0123456789").map(String.init)
                + Array("abcdefghijklmnopqrstuvwxyz").map { "##\($0)" } + words
            var random = SeededRandom(seed: 46)
            var tensors: [(String, [Int], [Float])] = []
            func add(_ name: String, _ shape: [Int], scale: Float = 0.05, constant: Float? = nil) {
                let count = shape.reduce(1, *)
                tensors.append(
                    (name, shape, (0..<count).map { _ in constant ?? random.normal() * scale }))
            }
            add("embeddings.word_embeddings.weight", [vocabulary.count, hidden], scale: 0.5)
            add("embeddings.position_embeddings.weight", [positions, hidden], scale: 0.02)
            add("embeddings.token_type_embeddings.weight", [2, hidden], scale: 0.02)
            add("embeddings.LayerNorm.weight", [hidden], constant: 1)
            add("embeddings.LayerNorm.bias", [hidden], constant: 0)
            for layer in 0..<layers {
                let prefix = "encoder.layer.\(layer)."
                for name in [
                    "attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense",
                ] {
                    add(prefix + name + ".weight", [hidden, hidden])
                    add(prefix + name + ".bias", [hidden], constant: 0)
                }
                add(prefix + "intermediate.dense.weight", [inner, hidden])
                add(prefix + "intermediate.dense.bias", [inner], constant: 0)
                add(prefix + "output.dense.weight", [hidden, inner])
                add(prefix + "output.dense.bias", [hidden], constant: 0)
                for name in ["attention.output.LayerNorm", "output.LayerNorm"] {
                    add(prefix + name + ".weight", [hidden], constant: 1)
                    add(prefix + name + ".bias", [hidden], constant: 0)
                }
            }
            let config: [String: Any] = [
                "architectures": ["BertModel"], "model_type": "bert", "hidden_size": hidden,
                "num_hidden_layers": layers, "num_attention_heads": 2, "intermediate_size": inner,
                "max_position_embeddings": positions, "type_vocab_size": 2, "vocab_size": vocabulary.count,
                "hidden_act": "gelu", "layer_norm_eps": 1e-12,
            ]
            let modules: [[String: Any]] = [
                ["idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"],
                ["idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"],
                ["idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"],
            ]
            let pooling: [String: Any] = [
                "word_embedding_dimension": hidden, "pooling_mode_mean_tokens": true,
                "pooling_mode_cls_token": false, "pooling_mode_max_tokens": false,
            ]
            return [
                "config.json": json(config), "vocab.txt": Array((vocabulary.joined(separator: "\n") + "\n").utf8),
                "tokenizer_config.json": json(["do_lower_case": true, "model_max_length": positions]),
                "modules.json": json(modules), "1_Pooling/config.json": json(pooling),
                "model.safetensors": safetensors(tensors),
            ]
        }

        /// Whole words both models know; the chat model says nothing else.
        static let words = """
            the a model file cache hub local device byte token stream chat reply fast safe disk network download \
            verify resume mirror server swift python llama vector search memory green blue red cat dog tree river \
            mountain sun moon star light dark day night kitten rug mat sits market fell stock today
            """.split(separator: " ").map(String.init)

        static func json(_ object: Any) -> [UInt8] {
            Array((try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data())
        }

        /// A safetensors file of F32 tensors, in the order given.
        static func safetensors(_ tensors: [(name: String, shape: [Int], values: [Float])]) -> [UInt8] {
            var header: [String: Any] = ["__metadata__": ["format": "pt"]]
            var offset = 0
            for tensor in tensors {
                let bytes = tensor.values.count * 4
                header[tensor.name] = [
                    "dtype": "F32", "shape": tensor.shape, "data_offsets": [offset, offset + bytes],
                ]
                offset += bytes
            }
            var headerBytes = json(header)
            while headerBytes.count % 8 != 0 { headerBytes.append(UInt8(ascii: " ")) }
            var file = littleEndian(UInt64(headerBytes.count)) + headerBytes
            for tensor in tensors { for value in tensor.values { file += littleEndian(value.bitPattern) } }
            return file
        }

        static func littleEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
            withUnsafeBytes(of: value.littleEndian, Array.init)
        }
    }

    /// Normal deviates from a fixed seed (SplitMix64, then Box–Muller): the demo's weights are the same every run.
    struct SeededRandom {
        private var generator: SplitMix64

        init(seed: UInt64) { generator = SplitMix64(seed: seed) }

        mutating func next() -> UInt64 { generator.next() }

        /// Uniform in (0, 1].
        mutating func unit() -> Float { Float(next() >> 40 + 1) / Float(1 << 24) }

        mutating func normal() -> Float { (-2 * log(unit())).squareRoot() * cos(2 * .pi * unit()) }
    }
#endif
