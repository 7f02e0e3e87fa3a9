import Foundation

/// What a `HEAD` on a file's resolve URL tells (the protocol note, §1.7): the commit, the ETag that names
/// the blob, the size, and where the bytes are (a CDN URL for LFS files on the real Hub).
public struct HubFileMetadata: Sendable, Hashable {
    /// The commit the revision resolved to.
    public var commit: String
    /// Normalised: no quotes, no `W/`. A 64-hex SHA-256 for LFS files, a 40-hex git blob id otherwise.
    public var etag: String
    /// The file's size, when the Hub announced it.
    public var size: Int64?
    /// Where to GET the content: the redirect target when the Hub pointed elsewhere, else the resolve URL.
    public var location: URL

    /// The file's SHA-256 when the ETag is one (an LFS file on the Hub); nil for a file whose ETag is a git blob id.
    public var sha256: String? { HubEncoding.isSHA256(etag) ? etag : nil }

    /// Metadata as a Hub answer gives it (a test's stub of it, too).
    public init(commit: String, etag: String, size: Int64?, location: URL) {
        self.commit = commit
        self.etag = etag
        self.size = size
        self.location = location
    }
}
