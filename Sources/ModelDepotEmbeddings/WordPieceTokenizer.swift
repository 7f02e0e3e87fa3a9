import Foundation
import ModelDepotCore

/// BERT's WordPiece tokenizer, read from a model's `tokenizer.json` (or `vocab.txt` and
/// `tokenizer_config.json`), giving the token ids Hugging Face's `tokenizers` gives.
///
/// ```swift
/// let tokenizer = try WordPieceTokenizer(folder: snapshot.folder)
/// let (inputIds, attentionMask) = tokenizer.encode("Hello world", maxLength: 128)
/// ```
///
/// Texts are cut at ``maxSequenceLength`` tokens, `[CLS]` and `[SEP]` included: the limit
/// sentence-transformers applies (`max_seq_length` in `sentence_bert_config.json`, 256 for
/// all-MiniLM-L6-v2), not the truncation written in `tokenizer.json` (128 there). ``Encoding/wasTruncated``
/// says when a text lost tokens.
public struct WordPieceTokenizer: Sendable {
    /// One text as token ids, with `[CLS]` first and `[SEP]` last.
    public struct Encoding: Sendable, Equatable {
        /// The token ids, padded with `[PAD]` when the encoding is part of a batch.
        public var ids: [Int]
        /// 1 for a real token, 0 for padding.
        public var attentionMask: [Int]
        /// Whether the text had more tokens than ``WordPieceTokenizer/maxSequenceLength`` and was cut.
        public var wasTruncated: Bool
    }

    /// The vocabulary: token → id.
    let vocabulary: [String: Int]
    let normalizer: BertNormalizer
    /// Tokens matched literally in the raw text before normalisation (`[CLS]`, `[SEP]`…), longest first.
    let addedTokens: [(scalars: [Unicode.Scalar], id: Int)]
    let unknownID: Int
    let classifierID: Int
    let separatorID: Int
    /// The id padding uses.
    public let paddingID: Int
    let continuingPrefix: String
    let maxCharactersPerWord: Int
    /// The most tokens one text is encoded into, `[CLS]` and `[SEP]` included.
    public let maxSequenceLength: Int

    /// Reads the tokenizer of the model in `folder`: `tokenizer.json` when present, else `vocab.txt` with
    /// `tokenizer_config.json`; the length limit from `sentence_bert_config.json` when present, else the
    /// tokenizer's `model_max_length`, else 512.
    public init(folder: URL) throws {
        let limit = Self.sentenceTransformersLimit(in: folder)
        let json = folder.appendingPathComponent("tokenizer.json")
        if FileManager.default.fileExists(atPath: json.path) {
            try self.init(tokenizerJSON: json, maxSequenceLength: limit)
        } else {
            try self.init(
                vocabularyFile: folder.appendingPathComponent("vocab.txt"),
                configuration: folder.appendingPathComponent("tokenizer_config.json"), maxSequenceLength: limit)
        }
    }

    /// Reads a `tokenizer.json` whose model is WordPiece with a BERT normaliser.
    public init(tokenizerJSON url: URL, maxSequenceLength: Int? = nil) throws {
        let object = try Self.jsonObject(at: url)
        guard let model = object["model"] as? [String: Any], let vocabulary = model["vocab"] as? [String: Int] else {
            throw Self.invalid(url, "it has no model vocabulary")
        }
        guard (model["type"] as? String) == "WordPiece" else {
            throw Self.invalid(
                url,
                "its model is \(model["type"] as? String ?? "unknown"), not WordPiece; the in-process encoder runs BERT-family models"
            )
        }
        var normalizer = BertNormalizer()
        if let settings = object["normalizer"] as? [String: Any] {
            guard (settings["type"] as? String) == "BertNormalizer" else {
                throw Self.invalid(
                    url, "its normalizer is \(settings["type"] as? String ?? "unknown"), not BertNormalizer")
            }
            normalizer.cleanText = settings["clean_text"] as? Bool ?? true
            normalizer.handleChineseCharacters = settings["handle_chinese_chars"] as? Bool ?? true
            normalizer.stripAccents = settings["strip_accents"] as? Bool
            normalizer.lowercase = settings["lowercase"] as? Bool ?? true
        }
        let added = (object["added_tokens"] as? [[String: Any]] ?? []).compactMap { token -> (String, Int)? in
            guard let content = token["content"] as? String, let id = token["id"] as? Int else { return nil }
            return (content, id)
        }
        try self.init(
            source: url, vocabulary: vocabulary, normalizer: normalizer, addedTokens: added,
            unknownToken: model["unk_token"] as? String ?? "[UNK]",
            continuingPrefix: model["continuing_subword_prefix"] as? String ?? "##",
            maxCharactersPerWord: model["max_input_chars_per_word"] as? Int ?? 100,
            maxSequenceLength: maxSequenceLength ?? 512)
    }

    /// Reads a `vocab.txt` (one token a line, the line number its id) and the casing settings of a
    /// `tokenizer_config.json` (`do_lower_case`, `strip_accents`, `tokenize_chinese_chars`).
    public init(vocabularyFile: URL, configuration: URL? = nil, maxSequenceLength: Int? = nil) throws {
        guard let text = try? String(contentsOf: vocabularyFile, encoding: .utf8) else {
            throw Self.invalid(vocabularyFile, "it cannot be read as UTF-8 text")
        }
        var vocabulary: [String: Int] = [:]
        for (id, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let token = line.hasSuffix("\r") ? String(line.dropLast()) : String(line)
            if !token.isEmpty, vocabulary[token] == nil { vocabulary[token] = id }
        }
        var normalizer = BertNormalizer()
        var limit = maxSequenceLength
        var specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
        if let configuration, FileManager.default.fileExists(atPath: configuration.path) {
            let settings = try Self.jsonObject(at: configuration)
            normalizer.lowercase = settings["do_lower_case"] as? Bool ?? true
            normalizer.stripAccents = settings["strip_accents"] as? Bool
            normalizer.handleChineseCharacters = settings["tokenize_chinese_chars"] as? Bool ?? true
            if limit == nil, let length = settings["model_max_length"] as? Int, length < 1 << 20 { limit = length }
            for key in ["pad_token", "unk_token", "cls_token", "sep_token", "mask_token"] {
                if let token = settings[key] as? String, !specials.contains(token) { specials.append(token) }
            }
        }
        try self.init(
            source: vocabularyFile, vocabulary: vocabulary, normalizer: normalizer,
            addedTokens: specials.compactMap { token in vocabulary[token].map { (token, $0) } },
            unknownToken: "[UNK]", continuingPrefix: "##", maxCharactersPerWord: 100,
            maxSequenceLength: limit ?? 512)
    }

    private init(
        source: URL, vocabulary: [String: Int], normalizer: BertNormalizer, addedTokens: [(String, Int)],
        unknownToken: String, continuingPrefix: String, maxCharactersPerWord: Int, maxSequenceLength: Int
    ) throws {
        func id(_ token: String) throws -> Int {
            guard let id = vocabulary[token] else { throw Self.invalid(source, "its vocabulary lacks \(token)") }
            return id
        }
        guard maxSequenceLength >= 2 else {
            throw Self.invalid(source, "its maximum sequence length \(maxSequenceLength) leaves no room for text")
        }
        self.vocabulary = vocabulary
        self.normalizer = normalizer
        self.addedTokens = addedTokens.map { (Array($0.0.unicodeScalars), $0.1) }.filter { !$0.0.isEmpty }
            .sorted { $0.0.count > $1.0.count }
        self.unknownID = try id(unknownToken)
        self.classifierID = try id("[CLS]")
        self.separatorID = try id("[SEP]")
        self.paddingID = vocabulary["[PAD]"] ?? 0
        self.continuingPrefix = continuingPrefix
        self.maxCharactersPerWord = maxCharactersPerWord
        self.maxSequenceLength = maxSequenceLength
    }

    // MARK: Encoding

    /// The WordPiece ids of `text`, without `[CLS]`, `[SEP]` or any limit.
    public func tokenIDs(_ text: String) -> [Int] {
        var ids: [Int] = []
        for piece in splitOnAddedTokens(Array(text.unicodeScalars)) {
            switch piece {
            case .added(let id): ids.append(id)
            case .text(let scalars):
                let normalized = normalizer.normalize(String(String.UnicodeScalarView(scalars)))
                for word in BertPreTokenizer.words(in: normalized) { appendWordPieces(of: word, to: &ids) }
            }
        }
        return ids
    }

    /// `text` as `[CLS]` tokens `[SEP]`, cut to ``maxSequenceLength``, without padding.
    public func encode(_ text: String) -> Encoding {
        let tokens = tokenIDs(text)
        let room = maxSequenceLength - 2
        let kept = tokens.prefix(room)
        let ids = [classifierID] + kept + [separatorID]
        return Encoding(
            ids: ids, attentionMask: Array(repeating: 1, count: ids.count), wasTruncated: tokens.count > room)
    }

    /// `text` padded (or cut) to exactly `maxLength` tokens, in the shape on-device encoders take: input ids
    /// and an attention mask of the same length. `maxLength` is capped at ``maxSequenceLength``.
    public func encode(_ text: String, maxLength: Int) -> (inputIds: [Int], attentionMask: [Int]) {
        let length = max(2, min(maxLength, maxSequenceLength))
        let tokens = tokenIDs(text).prefix(length - 2)
        var ids = [classifierID] + tokens + [separatorID]
        var mask = Array(repeating: 1, count: ids.count)
        ids += Array(repeating: paddingID, count: length - ids.count)
        mask += Array(repeating: 0, count: length - mask.count)
        return (ids, mask)
    }

    /// Each text encoded and padded to the longest one in the batch (as a batch is fed to the model).
    public func encode(batch texts: [String]) -> [Encoding] {
        var encodings = texts.map(encode)
        let longest = encodings.map(\.ids.count).max() ?? 0
        for index in encodings.indices {
            let padding = longest - encodings[index].ids.count
            encodings[index].ids += Array(repeating: paddingID, count: padding)
            encodings[index].attentionMask += Array(repeating: 0, count: padding)
        }
        return encodings
    }

    // MARK: Steps

    private enum Piece {
        case added(Int)
        case text([Unicode.Scalar])
    }

    /// Splits raw text at the added tokens it contains (matched literally, longest first).
    private func splitOnAddedTokens(_ scalars: [Unicode.Scalar]) -> [Piece] {
        guard !addedTokens.isEmpty else { return [.text(scalars)] }
        var pieces: [Piece] = []
        var start = 0
        var index = 0
        while index < scalars.count {
            let match = addedTokens.first { token in
                index + token.scalars.count <= scalars.count
                    && scalars[index..<index + token.scalars.count].elementsEqual(token.scalars)
            }
            if let match {
                if start < index { pieces.append(.text(Array(scalars[start..<index]))) }
                pieces.append(.added(match.id))
                index += match.scalars.count
                start = index
            } else {
                index += 1
            }
        }
        if start < scalars.count { pieces.append(.text(Array(scalars[start...]))) }
        return pieces
    }

    /// Greedy longest-match-first WordPiece: the longest vocabulary entry at the start of the word, then
    /// the longest `##` continuation, and so on; a word with a part no entry matches, or longer than
    /// `max_input_chars_per_word`, is one `[UNK]`.
    private func appendWordPieces(of word: [Unicode.Scalar], to ids: inout [Int]) {
        guard word.count <= maxCharactersPerWord else {
            ids.append(unknownID)
            return
        }
        var pieces: [Int] = []
        var start = 0
        while start < word.count {
            var end = word.count
            var found: Int?
            while end > start {
                var candidate = String(String.UnicodeScalarView(word[start..<end]))
                if start > 0 { candidate = continuingPrefix + candidate }
                if let id = vocabulary[candidate] {
                    found = id
                    break
                }
                end -= 1
            }
            guard let found else {
                ids.append(unknownID)
                return
            }
            pieces.append(found)
            start = end
        }
        ids += pieces
    }

    // MARK: Files

    /// `max_seq_length` from `sentence_bert_config.json`, when the folder has one.
    static func sentenceTransformersLimit(in folder: URL) -> Int? {
        let url = folder.appendingPathComponent("sentence_bert_config.json")
        return (try? jsonObject(at: url))?["max_seq_length"] as? Int
    }

    static func jsonObject(at url: URL) throws -> [String: Any] {
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw ModelDepotError(
                .invalidModelFile,
                "\(url.path) is missing or unreadable. Pull the model again (or verify and repair it).")
        }
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw invalid(url, "it is not a JSON object")
        }
        return object
    }

    static func invalid(_ url: URL, _ reason: String) -> ModelDepotError {
        ModelDepotError(
            .invalidModelFile, "\(url.lastPathComponent) cannot be used as a WordPiece tokenizer: \(reason).")
    }
}
