import Foundation

/// What the Hub says about a repository at a revision (`/api/models/{repo}/revision/{rev}`), the fields
/// ModelDepot uses. Unknown fields are ignored, as Python's client ignores them.
package struct RepoInfo: Sendable, Hashable, Decodable {
    /// A file of the revision, as the repository info lists it.
    package struct Sibling: Sendable, Hashable, Decodable {
        /// The path in the repository.
        package var rfilename: String
        /// The size in bytes, when listed.
        package var size: Int64?
        /// The git blob id.
        package var blobId: String?
        /// LFS facts for LFS-tracked files.
        package var lfs: LFS?

        /// The SHA-256 and size of an LFS-tracked file's content.
        package struct LFS: Sendable, Hashable, Decodable {
            /// The SHA-256 of the content.
            package var sha256: String
            /// The size of the content.
            package var size: Int64
        }
    }

    /// The repository id.
    package var id: String
    /// The commit the revision resolved to.
    package var sha: String?
    /// When the repository last changed (ISO 8601, as the Hub writes it).
    package var lastModified: String?
    /// Whether the repository is private.
    package var isPrivate: Bool
    /// `nil` when not gated, else `"auto"` or `"manual"`.
    package var gated: String?
    /// Downloads in the last month, as the Hub counts them.
    package var downloads: Int?
    /// Likes on the Hub.
    package var likes: Int?
    /// The repository's tags.
    package var tags: [String]
    /// The task the model is for (`text-generation`, `sentence-similarity`…).
    package var pipelineTag: String?
    /// The library the model is for (`transformers`, `gguf`…).
    package var libraryName: String?
    /// The files of the revision.
    package var siblings: [Sibling]

    enum CodingKeys: String, CodingKey {
        case id, modelId, sha, lastModified, gated, downloads, likes, tags, siblings
        case isPrivate = "private"
        case pipelineTag = "pipeline_tag"
        case libraryName = "library_name"
    }

    package init(from decoder: any Decoder) throws {
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
