import Foundation

/// What the Hub says about a repository at a revision (`/api/models/{repo}/revision/{rev}`), the fields
/// ModelDepot uses. Unknown fields are ignored, as Python's client ignores them.
public struct RepoInfo: Sendable, Hashable, Decodable {
    /// A file of the revision, as the repository info lists it.
    public struct Sibling: Sendable, Hashable, Decodable {
        /// The path in the repository.
        public var rfilename: String
        /// The size in bytes, when listed.
        public var size: Int64?
        /// The git blob id.
        public var blobId: String?
        /// LFS facts for LFS-tracked files.
        public var lfs: LFS?

        /// The SHA-256 and size of an LFS-tracked file's content.
        public struct LFS: Sendable, Hashable, Decodable {
            /// The SHA-256 of the content.
            public var sha256: String
            /// The size of the content.
            public var size: Int64
        }
    }

    /// The repository id.
    public var id: String
    /// The commit the revision resolved to.
    public var sha: String?
    /// When the repository last changed (ISO 8601, as the Hub writes it).
    public var lastModified: String?
    /// Whether the repository is private.
    public var isPrivate: Bool
    /// `nil` when not gated, else `"auto"` or `"manual"`.
    public var gated: String?
    /// Downloads in the last month, as the Hub counts them.
    public var downloads: Int?
    /// Likes on the Hub.
    public var likes: Int?
    /// The repository's tags.
    public var tags: [String]
    /// The task the model is for (`text-generation`, `sentence-similarity`…).
    public var pipelineTag: String?
    /// The library the model is for (`transformers`, `gguf`…).
    public var libraryName: String?
    /// The files of the revision.
    public var siblings: [Sibling]

    enum CodingKeys: String, CodingKey {
        case id, modelId, sha, lastModified, gated, downloads, likes, tags, siblings
        case isPrivate = "private"
        case pipelineTag = "pipeline_tag"
        case libraryName = "library_name"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id =
            try container.decodeIfPresent(String.self, forKey: .id)
            ?? container.decode(String.self, forKey: .modelId)
        sha = try container.decodeIfPresent(String.self, forKey: .sha)
        lastModified = try? container.decodeIfPresent(String.self, forKey: .lastModified)
        isPrivate = (try? container.decodeIfPresent(Bool.self, forKey: .isPrivate)) ?? false
        // `false`, `"auto"` or `"manual"`.
        if let mode = try? container.decodeIfPresent(String.self, forKey: .gated) {
            gated = mode
        } else {
            gated = (try? container.decodeIfPresent(Bool.self, forKey: .gated)) == true ? "true" : nil
        }
        downloads = try? container.decodeIfPresent(Int.self, forKey: .downloads)
        likes = try? container.decodeIfPresent(Int.self, forKey: .likes)
        tags = (try? container.decodeIfPresent([String].self, forKey: .tags)) ?? []
        pipelineTag = try? container.decodeIfPresent(String.self, forKey: .pipelineTag)
        libraryName = try? container.decodeIfPresent(String.self, forKey: .libraryName)
        siblings = (try? container.decodeIfPresent([Sibling].self, forKey: .siblings)) ?? []
    }
}
