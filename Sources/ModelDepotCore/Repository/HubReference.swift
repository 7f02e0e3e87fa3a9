import Foundation

/// What a user names when they point at a repository: a repository id (`org/name`), or a `hf://` URI as
/// huggingface_hub's file system writes them — `hf://org/name`, `hf://datasets/org/name`,
/// `hf://org/name@revision/path/in/repo` — with its type, revision and file when the URI gives them.
///
/// In a URI the first two segments after the type are the repository (`org/name`); everything after them is
/// a path inside it. A revision follows the name after `@`, percent-encoded when it holds a `/`
/// (`@refs%2Fpr%2F1`), as huggingface_hub encodes it.
public struct HubReference: Sendable, Hashable {
    public var type: RepoType
    public var repo: RepoID
    /// The branch, tag or commit the URI names; nil when it names none.
    public var revision: String?
    /// A file (or folder) inside the repository; nil when the reference names the repository.
    public var path: String?

    /// Parses `text`: a `hf://` URI; a repository id with its type in front, as the Hub's URLs write it
    /// (`datasets/org/name`, `models/org/name`); or a plain repository id of type `defaultType`.
    ///
    /// - Throws: `invalidArgument` saying what is wrong and what a valid reference looks like.
    public init(parsing text: String, defaultType: RepoType = .model) throws {
        guard text.lowercased().hasPrefix("hf://") else {
            let segments = text.split(separator: "/", omittingEmptySubsequences: false)
            if segments.count == 3, let named = RepoType.allCases.first(where: { $0.apiSegment == segments[0] }) {
                type = named
                repo = try RepoID(segments.dropFirst().joined(separator: "/"))
            } else {
                type = defaultType
                repo = try RepoID(text)
            }
            return
        }
        let invalid = { (reason: String) in
            ModelDepotError(
                .invalidArgument,
                "'\(text)' is not a usable hf:// URI: \(reason). Write hf://org/name, hf://datasets/org/name, or hf://org/name@revision/path/in/repo."
            )
        }
        var segments = text.dropFirst(5).split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        if segments.last == "" { segments.removeLast() }
        var type = defaultType
        if let first = segments.first, let named = RepoType.allCases.first(where: { $0.apiSegment == first }) {
            type = named
            segments.removeFirst()
        }
        guard segments.count >= 2, !segments[0].isEmpty, !segments[1].isEmpty else {
            throw invalid("it names no repository (org/name)")
        }
        var name = segments[1]
        var revision: String?
        if let at = name.firstIndex(of: "@") {
            let encoded = String(name[name.index(after: at)...])
            guard !encoded.isEmpty, let decoded = encoded.removingPercentEncoding, !decoded.isEmpty else {
                throw invalid("the revision after '@' is empty or badly percent-encoded")
            }
            revision = decoded
            name = String(name[..<at])
        }
        do {
            repo = try RepoID(segments[0] + "/" + name)
        } catch let error as ModelDepotError {
            throw invalid(error.message)
        }
        let rest = segments.dropFirst(2)
        guard !rest.contains("") else { throw invalid("its path has an empty segment") }
        self.type = type
        self.revision = revision
        path = rest.isEmpty ? nil : rest.joined(separator: "/")
    }

    /// Whether `text` names its repository's type itself (`hf://datasets/…`, `datasets/org/name`), so that a
    /// `--repo-type` saying otherwise contradicts it.
    public static func namesType(_ text: String) -> Bool {
        let withoutScheme = isURI(text) ? String(text.dropFirst(5)) : text
        let first = withoutScheme.split(separator: "/", maxSplits: 1).first.map(String.init)
        return RepoType.allCases.contains { $0.apiSegment == first }
            && (isURI(text) || text.split(separator: "/", omittingEmptySubsequences: false).count == 3)
    }

    /// Whether `text` is a `hf://` URI rather than a bare name.
    public static func isURI(_ text: String) -> Bool { text.lowercased().hasPrefix("hf://") }
}
