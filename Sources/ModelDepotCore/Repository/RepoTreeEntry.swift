/// One entry of a repository's tree listing (`/api/models/{repo}/tree/{rev}`): a file or a folder.
public struct RepoTreeEntry: Sendable, Hashable, Codable {
    public enum Kind: String, Sendable, Hashable, Codable {
        case file, directory
    }

    /// LFS details of a large file: its SHA-256 (the blob name in the cache) and size.
    public struct LFS: Sendable, Hashable, Codable {
        public var oid: String
        public var size: Int64
        public var pointerSize: Int64?

        public init(oid: String, size: Int64, pointerSize: Int64? = nil) {
            self.oid = oid
            self.size = size
            self.pointerSize = pointerSize
        }
    }

    public var type: Kind
    /// The git object id: the blob SHA-1 of a file (of its LFS pointer for LFS files), the tree id of a folder.
    public var oid: String
    public var size: Int64
    public var path: String
    public var lfs: LFS?

    public init(type: Kind, oid: String, size: Int64, path: String, lfs: LFS? = nil) {
        self.type = type
        self.oid = oid
        self.size = size
        self.path = path
        self.lfs = lfs
    }

    public var isFile: Bool { type == .file }

    /// The name the cache gives the file's blob: the LFS SHA-256, else the git blob id — what the Hub sends
    /// as the file's ETag.
    public var etag: String { lfs?.oid ?? oid }
}
