import ModelDepot
import Testing

/// `fnmatch.fnmatchcase` semantics, as Python's allow/ignore patterns use them.
@Suite struct FilePatternTests {
    @Test(arguments: [
        ("*.json", "config.json", true),
        ("*.json", "data/sub/x.json", true),  // `*` crosses `/`
        ("data/*.json", "data/sub/x.json", true),
        ("*.JSON", "config.json", false),  // case-sensitive
        ("model-?.gguf", "model-1.gguf", true),
        ("model-?.gguf", "model-12.gguf", false),
        ("onnx/", "onnx/model.onnx", true),  // a folder pattern means everything below it
        ("onnx/", "other/onnx.onnx", false),
        ("*q4_[kK]_m*", "qwen-q4_k_m.gguf", true),
        ("*[!0-9].bin", "a1.bin", false),
        ("*[!0-9].bin", "ab.bin", true),
        ("[abc", "[abc", true),  // an unclosed `[` is literal
        ("a\\b", "a/b", true),  // backslashes read as `/`
        ("*", "", true),
        ("", "x", false),
        ("*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false),
    ])
    func matches(pattern: String, path: String, expected: Bool) {
        #expect(FilePattern(pattern).matches(path) == expected, "\(pattern) vs \(path)")
    }

    @Test func includeAndExcludeCombine() {
        let selection = FileSelection(include: ["*.gguf", "*.json"], exclude: ["*f16*"])
        #expect(selection.selects("model-q4.gguf"))
        #expect(selection.selects("config.json"))
        #expect(!selection.selects("model-f16.gguf"))
        #expect(!selection.selects("README.md"))
        #expect(FileSelection.everything.selects("anything/at/all"))
    }
}
