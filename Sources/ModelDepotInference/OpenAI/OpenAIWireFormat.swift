/// The JSON documents of the OpenAI chat-completions and embeddings APIs, only the fields ModelDepot uses.
enum OpenAIWireFormat {
    struct ChatRequest: Encodable {
        struct StreamOptions: Encodable {
            var includeUsage = true
            enum CodingKeys: String, CodingKey { case includeUsage = "include_usage" }
        }

        var model: String?
        var messages: [ChatMessage]
        var stream: Bool
        var streamOptions: StreamOptions?
        var temperature: Double?
        var topP: Double?
        var maxTokens: Int?
        var stop: [String]?
        var frequencyPenalty: Double?
        var presencePenalty: Double?
        var seed: Int?

        init(model: String?, messages: [ChatMessage], config: GenerationConfig, stream: Bool) {
            self.model = model
            self.messages = messages
            self.stream = stream
            // Asks for a final usage chunk; servers that do not know the option ignore it.
            self.streamOptions = stream ? StreamOptions() : nil
            temperature = config.temperature
            topP = config.topP
            maxTokens = config.maxTokens
            stop = config.stopSequences.isEmpty ? nil : config.stopSequences
            frequencyPenalty = config.frequencyPenalty
            presencePenalty = config.presencePenalty
            seed = config.seed
        }

        enum CodingKeys: String, CodingKey {
            case model, messages, stream, temperature, stop, seed
            case streamOptions = "stream_options"
            case topP = "top_p"
            case maxTokens = "max_tokens"
            case frequencyPenalty = "frequency_penalty"
            case presencePenalty = "presence_penalty"
        }
    }

    struct ChatResponse: Decodable {
        struct Choice: Decodable {
            struct Message: Decodable { var content: String? }
            var message: Message?
            var finishReason: String?
            enum CodingKeys: String, CodingKey {
                case message
                case finishReason = "finish_reason"
            }
        }
        var choices: [Choice]
        var usage: TokenUsage?
    }

    struct ChatChunk: Decodable {
        struct Choice: Decodable {
            struct Delta: Decodable { var content: String? }
            var delta: Delta?
            var finishReason: String?
            enum CodingKeys: String, CodingKey {
                case delta
                case finishReason = "finish_reason"
            }
        }
        var choices: [Choice]?
        var usage: TokenUsage?
        /// Set when the event is an error report instead of a chunk (its shape varies; it is read loosely).
        var error: Present?
    }

    /// Decodes any JSON value without reading it: only whether a key is there matters.
    struct Present: Decodable {
        init(from decoder: any Decoder) throws {}
    }

    struct EmbeddingRequest: Encodable {
        var model: String?
        var input: [String]
        var encodingFormat = "float"
        enum CodingKeys: String, CodingKey {
            case model, input
            case encodingFormat = "encoding_format"
        }
    }

    struct EmbeddingResponse: Decodable {
        struct Item: Decodable {
            var embedding: [Float]
            var index: Int?
        }
        var data: [Item]
    }

    struct ModelList: Decodable {
        struct Model: Decodable { var id: String }
        var data: [Model]
    }
}
