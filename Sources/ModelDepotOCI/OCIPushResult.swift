import Foundation

/// What a push to an OCI registry did (`ModelManager.pushModelPack`).
public struct OCIPushResult: Sendable, Codable, Equatable {
    /// The artifact pushed, by tag.
    public var reference: String
    /// The manifest's digest: `reference` pinned (`…@sha256:…`) names exactly this model.
    public var digest: String
    public var repo: String
    public var commit: String
    /// Layers (files) in the artifact, and their bytes.
    public var files: Int
    public var bytes: Int64
    /// Blobs uploaded, found in the registry already, and mounted from another of its repositories.
    public var blobsUploaded: Int
    public var blobsPresent: Int
    public var blobsMounted: Int
    /// Bytes sent by this push.
    public var bytesUploaded: Int64
    /// Files the commit's listing names that are not cached, so not in the artifact.
    public var filesNotCached: [String]

    package init(
        reference: String, digest: String, repo: String, commit: String, files: Int, bytes: Int64, blobsUploaded: Int,
        blobsPresent: Int, blobsMounted: Int, bytesUploaded: Int64, filesNotCached: [String]
    ) {
        self.reference = reference
        self.digest = digest
        self.repo = repo
        self.commit = commit
        self.files = files
        self.bytes = bytes
        self.blobsUploaded = blobsUploaded
        self.blobsPresent = blobsPresent
        self.blobsMounted = blobsMounted
        self.bytesUploaded = bytesUploaded
        self.filesNotCached = filesNotCached
    }
}
