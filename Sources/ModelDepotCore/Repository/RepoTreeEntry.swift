/// One entry of a repository's tree listing (`/api/models/{repo}/tree/{rev}`): a file or a folder.
package struct RepoTreeEntry: Sendable, Hashable, Codable {
    /// A file or a folder.
    package enum Kind: String, Sendable, Hashable, Codable {
        case file, directory
    }

    /// LFS details of a large file: its SHA-256 (the blob name in the cache) and size.
    package struct LFS: Sendable, Hashable, Codable {
        /// The SHA-256 of the file's content.
        package var oid: String
        /// The size of the file's content.
        package var size: Int64
        /// The size of the pointer file git stores in its place.
        package var pointerSize: Int64?

        /// LFS facts as the Hub lists them.
        package init(oid: String, size: Int64, pointerSize: Int64? = nil) {
            self.oid = oid
            self.size = size
            self.pointerSize = pointerSize
        }
    }

    /// A file or a folder.
    package var type: Kind
    /// The git object id: the blob SHA-1 of a file (of its LFS pointer for LFS files), the tree id of a folder.
    package var oid: String
    /// The size in bytes (0 for folders).
    package var size: Int64
    /// The path in the repository.
    package var path: String
    /// LFS facts for LFS-tracked files; nil for files git stores itself.
    package var lfs: LFS?
    /// The file's Xet hash, when the server stores it in Xet and says so (the Hub's `xetHash`).
    package var xetHash: String?

    /// An entry as the Hub lists it.
    package init(type: Kind, oid: String, size: Int64, path: String, lfs: LFS? = nil, xetHash: String? = nil) {
        self.xetHash = xetHash
        self.type = type
        self.oid = oid
        self.size = size
        self.path = path
        self.lfs = lfs
    }

    /// Whether the entry is a file.
    package var isFile: Bool { type == .file }

    /// The name the cache gives the file's blob: the LFS SHA-256, else the git blob id — what the Hub sends
    /// as the file's ETag.
    package var etag: String { lfs?.oid ?? oid }
}
