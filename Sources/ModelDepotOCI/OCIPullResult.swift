import Foundation

/// What a pull from an OCI registry did (`ModelManager.pullModelPack`).
public struct OCIPullResult: Sendable, Codable, Equatable {
    /// The artifact pulled, and its manifest's digest.
    public var reference: String
    public var digest: String
    /// The Hub repository and commit the artifact says it is (nil for an artifact that names none).
    public var repo: String?
    public var commit: String?
    /// The snapshot folder in the cache, or the local directory.
    public var folder: String
    public var files: [String]
    public var filesDownloaded: Int
    public var bytesDownloaded: Int64

    package init(
        reference: String, digest: String, repo: String?, commit: String?, folder: String, files: [String],
        filesDownloaded: Int, bytesDownloaded: Int64
    ) {
        self.reference = reference
        self.digest = digest
        self.repo = repo
        self.commit = commit
        self.folder = folder
        self.files = files
        self.filesDownloaded = filesDownloaded
        self.bytesDownloaded = bytesDownloaded
    }
}
