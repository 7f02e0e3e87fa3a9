#if os(Linux) || os(macOS)
    import Foundation

    extension DemoModels {
        /// A llama-architecture chat model in GGUF (version 3, F32, about 0.3 MB) that llama.cpp's server loads and
        /// runs: a SentencePiece-style vocabulary (byte tokens, ASCII, ChatML markers, whole words and their
        /// prefixes), random weights tilted so that only whole words are ever sampled (streamed text is always
        /// valid UTF-8), mean pooling so `/v1/embeddings` answers, and a ChatML template. It never emits its end
        /// token: a reply ends at the token limit. The layout is GGUF's as llama.cpp's `gguf` writer produces it.
        static func chatGGUF() -> [UInt8] {
            let embedding = 64
            let feedForward = 128
            let heads = 4
            let blocks = 2
            var tokens: [(text: String, type: Int32, score: Float)] = [
                ("<unk>", TokenType.unknown, 0), ("<s>", TokenType.control, 0), ("</s>", TokenType.control, 0),
            ]
            tokens += (0..<256).map { (String(format: "<0x%02X>", $0), TokenType.byte, 0) }
            tokens += [("<|im_start|>", TokenType.control, 0), ("<|im_end|>", TokenType.control, 0)]
            tokens.append(("\u{2581}", TokenType.normal, -1))
            tokens += (33..<127).map { (String(UnicodeScalar(UInt8($0))), TokenType.normal, -2) }
            var seen = Set(tokens.map(\.text))
            for word in words {
                // SentencePiece merges pairwise: every prefix of "▁word" must be a token for the word to form.
                let piece = Array("\u{2581}" + word)
                for end in 2...piece.count where seen.insert(String(piece[..<end])).inserted {
                    tokens.append((String(piece[..<end]), TokenType.normal, Float(end)))
                }
            }
            let wordSet = Set(words.map { "\u{2581}" + $0 })
            let wordTokens = Set(tokens.indices.filter { wordSet.contains(tokens[$0].text) })
            let vocabulary = tokens.count

            var random = SeededRandom(seed: 1234)
            func weights(_ count: Int, scale: Float = 0.02) -> [Float] {
                (0..<count).map { _ in random.normal() * scale }
            }
            // A constant feature every token shares pushes every logit down, except whole words'.
            var tokenEmbedding = weights(vocabulary * embedding, scale: 0.5)
            var output = weights(vocabulary * embedding, scale: 0.5)
            for token in 0..<vocabulary {
                tokenEmbedding[token * embedding] = 4
                output[token * embedding] = wordTokens.contains(token) ? 0 : -50
            }
            // (name, dimensions fastest first as GGUF stores them, values row-major)
            var tensors: [(String, [Int], [Float])] = [
                ("token_embd.weight", [embedding, vocabulary], tokenEmbedding),
                ("output_norm.weight", [embedding], Array(repeating: 1, count: embedding)),
                ("output.weight", [embedding, vocabulary], output),
            ]
            for block in 0..<blocks {
                let prefix = "blk.\(block)."
                tensors.append((prefix + "attn_norm.weight", [embedding], Array(repeating: 1, count: embedding)))
                for name in ["attn_q", "attn_k", "attn_v", "attn_output"] {
                    tensors.append((prefix + name + ".weight", [embedding, embedding], weights(embedding * embedding)))
                }
                tensors.append((prefix + "ffn_norm.weight", [embedding], Array(repeating: 1, count: embedding)))
                tensors.append(
                    (prefix + "ffn_gate.weight", [embedding, feedForward], weights(feedForward * embedding)))
                tensors.append((prefix + "ffn_up.weight", [embedding, feedForward], weights(feedForward * embedding)))
                tensors.append(
                    (prefix + "ffn_down.weight", [feedForward, embedding], weights(feedForward * embedding)))
            }

            var writer = GGUFWriter()
            writer.string("general.architecture", "llama")
            writer.string("general.name", "modeldepot-demo-llama")
            writer.uint32("llama.context_length", 2048)
            writer.uint32("llama.embedding_length", UInt32(embedding))
            writer.uint32("llama.block_count", UInt32(blocks))
            writer.uint32("llama.feed_forward_length", UInt32(feedForward))
            writer.uint32("llama.attention.head_count", UInt32(heads))
            writer.uint32("llama.attention.head_count_kv", UInt32(heads))
            writer.uint32("llama.rope.dimension_count", UInt32(embedding / heads))
            writer.float32("llama.rope.freq_base", 10000)
            writer.float32("llama.attention.layer_norm_rms_epsilon", 1e-5)
            writer.uint32("general.file_type", 0)  // all F32
            writer.uint32("llama.pooling_type", 1)  // mean
            writer.string("tokenizer.ggml.model", "llama")
            writer.strings("tokenizer.ggml.tokens", tokens.map(\.text))
            writer.float32s("tokenizer.ggml.scores", tokens.map(\.score))
            writer.int32s("tokenizer.ggml.token_type", tokens.map(\.type))
            writer.uint32("tokenizer.ggml.bos_token_id", 1)
            writer.uint32("tokenizer.ggml.eos_token_id", 2)
            writer.bool("tokenizer.ggml.add_bos_token", true)
            writer.string(
                "tokenizer.chat_template",
                "{% for message in messages %}<|im_start|>{{ message['role'] }}\n{{ message['content'] }}<|im_end|>\n"
                    + "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
            return writer.file(tensors: tensors)
        }

        /// A GGUF whose header declares a model far too big for any machine (65536 layers, 1024 KV heads of 128:
        /// 128 TiB of KV cache at a 4096-token context) over one small tensor: loading it is refused with the
        /// estimate, and loading it anyway shows how a runtime that fails to start is reported.
        static func oversizedGGUF() -> [UInt8] {
            var writer = GGUFWriter()
            writer.string("general.architecture", "llama")
            writer.string("general.name", "modeldepot-demo-huge")
            writer.uint32("llama.context_length", 131_072)
            writer.uint32("llama.embedding_length", 131_072)
            writer.uint32("llama.block_count", 65536)
            writer.uint32("llama.attention.head_count", 1024)
            writer.uint32("llama.attention.head_count_kv", 1024)
            writer.uint32("general.file_type", 0)
            return writer.file(tensors: [("token_embd.weight", [16, 16], Array(repeating: 0, count: 256))])
        }

        /// llama.cpp's token types (`llama_token_type`).
        enum TokenType {
            static let normal: Int32 = 1
            static let unknown: Int32 = 2
            static let control: Int32 = 3
            static let byte: Int32 = 6
        }
    }

    /// Writes GGUF version 3 (ggml's `gguf.h`): "GGUF", version, tensor and key counts, the keys and their typed
    /// values, each tensor's name, dimensions, type (0: F32) and offset, then the data, every tensor aligned to 32.
    struct GGUFWriter {
        private var keys: [UInt8] = []
        private var keyCount: UInt64 = 0
        static let alignment = 32

        private mutating func key(_ name: String, type: UInt32) {
            keys += Self.text(name) + DemoModels.littleEndian(type)
            keyCount += 1
        }

        static func text(_ value: String) -> [UInt8] {
            DemoModels.littleEndian(UInt64(value.utf8.count)) + Array(value.utf8)
        }

        mutating func uint32(_ name: String, _ value: UInt32) {
            key(name, type: 4)
            keys += DemoModels.littleEndian(value)
        }
        mutating func float32(_ name: String, _ value: Float) {
            key(name, type: 6)
            keys += DemoModels.littleEndian(value.bitPattern)
        }
        mutating func bool(_ name: String, _ value: Bool) {
            key(name, type: 7)
            keys.append(value ? 1 : 0)
        }
        mutating func string(_ name: String, _ value: String) {
            key(name, type: 8)
            keys += Self.text(value)
        }
        mutating func strings(_ name: String, _ values: [String]) {
            key(name, type: 9)
            keys += DemoModels.littleEndian(UInt32(8)) + DemoModels.littleEndian(UInt64(values.count))
            for value in values { keys += Self.text(value) }
        }
        mutating func float32s(_ name: String, _ values: [Float]) {
            key(name, type: 9)
            keys += DemoModels.littleEndian(UInt32(6)) + DemoModels.littleEndian(UInt64(values.count))
            for value in values { keys += DemoModels.littleEndian(value.bitPattern) }
        }
        mutating func int32s(_ name: String, _ values: [Int32]) {
            key(name, type: 9)
            keys += DemoModels.littleEndian(UInt32(5)) + DemoModels.littleEndian(UInt64(values.count))
            for value in values { keys += DemoModels.littleEndian(value) }
        }

        /// The whole file, with `tensors` (name, dimensions fastest first, F32 values) after the keys.
        func file(tensors: [(String, [Int], [Float])]) -> [UInt8] {
            var file = Array("GGUF".utf8) + DemoModels.littleEndian(UInt32(3))
            file += DemoModels.littleEndian(UInt64(tensors.count)) + DemoModels.littleEndian(keyCount) + keys
            var offset = 0
            for (name, dimensions, values) in tensors {
                file += Self.text(name) + DemoModels.littleEndian(UInt32(dimensions.count))
                for dimension in dimensions { file += DemoModels.littleEndian(UInt64(dimension)) }
                file += DemoModels.littleEndian(UInt32(0)) + DemoModels.littleEndian(UInt64(offset))
                offset += Self.padded(values.count * 4)
            }
            file += [UInt8](repeating: 0, count: Self.padded(file.count) - file.count)
            for (_, _, values) in tensors {
                let start = file.count
                for value in values { file += DemoModels.littleEndian(value.bitPattern) }
                file += [UInt8](repeating: 0, count: Self.padded(file.count - start) - (file.count - start))
            }
            return file
        }

        static func padded(_ count: Int) -> Int { (count + alignment - 1) / alignment * alignment }
    }
#endif
