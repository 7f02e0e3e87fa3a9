import Foundation

/// What the Hub says about a repository at a revision (`/api/models/{repo}/revision/{rev}`), the fields
/// ModelDepot uses. Unknown fields are ignored, as Python's client ignores them.
public struct RepoInfo: Sendable, Hashable, Decodable {
    public struct Sibling: Sendable, Hashable, Decodable {
        public var rfilename: String
        public var size: Int64?
        public var blobId: String?
        public var lfs: LFS?

        public struct LFS: Sendable, Hashable, Decodable {
            public var sha256: String
            public var size: Int64
        }
    }

    public var id: String
    /// The commit the revision resolved to.
    public var sha: String?
    public var lastModified: String?
    public var isPrivate: Bool
    /// `nil` when not gated, else `"auto"` or `"manual"`.
    public var gated: String?
    public var downloads: Int?
    public var likes: Int?
    public var tags: [String]
    public var pipelineTag: String?
    public var libraryName: String?
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
