/// A glob over repository paths with the semantics of Python's `allow_patterns` / `ignore_patterns`
/// (`fnmatch.fnmatchcase` on the full path, the protocol note §5):
///
/// - case-sensitive; `*` matches any run of characters **including `/`** (`data/*.json` matches
///   `data/sub/x.json`); `?` any one character; `[abc]`, `[a-z]`, `[!abc]` sets (an unclosed `[` is literal);
/// - a pattern ending in `/` matches everything below that folder (`onnx/` = `onnx/*`);
/// - backslashes are read as `/`, in patterns and in paths.
public struct FilePattern: Sendable, Hashable, CustomStringConvertible {
    /// The glob as written.
    public let pattern: String
    private let scalars: [Unicode.Scalar]

    /// A glob: `*` matches across `/` (as huggingface_hub's fnmatch does), `?` one character, `[...]` a set.
    public init(_ pattern: String) {
        var normalized = pattern.replacingOccurrences(of: "\\", with: "/")
        if normalized.hasSuffix("/") { normalized += "*" }
        self.pattern = normalized
        self.scalars = Array(normalized.unicodeScalars)
    }

    public var description: String { pattern }

    /// Whether `path` matches the glob.
    public func matches(_ path: String) -> Bool {
        let text = Array(path.replacingOccurrences(of: "\\", with: "/").unicodeScalars)
        var p = 0
        var t = 0
        // Where to resume after the last `*`: the pattern index after it and the text index it is trying.
        var star: (pattern: Int, text: Int)?
        while t < text.count {
            if p < scalars.count {
                switch scalars[p] {
                case "*":
                    star = (p + 1, t)
                    p += 1
                    continue
                case "?":
                    p += 1
                    t += 1
                    continue
                case "[":
                    if let (matched, next) = matchSet(at: p, text[t]) {
                        if matched {
                            p = next
                            t += 1
                            continue
                        }
                    } else if text[t] == "[" {
                        p += 1
                        t += 1
                        continue
                    }
                default:
                    if scalars[p] == text[t] {
                        p += 1
                        t += 1
                        continue
                    }
                }
            }
            guard let last = star else { return false }
            star = (last.pattern, last.text + 1)
            p = last.pattern
            t = last.text + 1
        }
        while p < scalars.count, scalars[p] == "*" { p += 1 }
        return p == scalars.count
    }

    /// Matches `character` against the set starting at `start` (`[`); nil when the `[` is not closed.
    private func matchSet(at start: Int, _ character: Unicode.Scalar) -> (Bool, Int)? {
        var index = start + 1
        var negate = false
        if index < scalars.count, scalars[index] == "!" {
            negate = true
            index += 1
        }
        var matched = false
        var first = true
        while index < scalars.count {
            let current = scalars[index]
            if current == "]" && !first { return (matched != negate, index + 1) }
            first = false
            if index + 2 < scalars.count, scalars[index + 1] == "-", scalars[index + 2] != "]" {
                if current.value <= character.value && character.value <= scalars[index + 2].value { matched = true }
                index += 3
            } else {
                if current == character { matched = true }
                index += 1
            }
        }
        return nil
    }
}

/// Allow and ignore patterns together: a path is selected when it matches at least one allow pattern (or
/// none are given) and no ignore pattern.
public struct FileSelection: Sendable, Hashable {
    /// Globs a file must match one of (all files when empty).
    public var include: [FilePattern]
    /// Globs that drop a file even when it matches `include`.
    public var exclude: [FilePattern]
    /// When set, only these exact paths (on top of the patterns): how a repair asks for precisely the bad files.
    public var paths: Set<String>?

    /// A selection by globs, optionally narrowed to exact `paths`.
    public init(include: [String] = [], exclude: [String] = [], paths: Set<String>? = nil) {
        self.include = include.map(FilePattern.init)
        self.exclude = exclude.map(FilePattern.init)
        self.paths = paths
    }

    /// Every file.
    public static let everything = FileSelection()

    /// Whether the selection takes `path`.
    public func selects(_ path: String) -> Bool {
        (paths?.contains(path) ?? true) && (include.isEmpty || include.contains { $0.matches(path) })
            && !exclude.contains { $0.matches(path) }
    }
}
