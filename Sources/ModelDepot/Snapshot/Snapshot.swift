import Foundation
import ModelDepotCore
import ModelDepotHub
import ModelDepotTrust

/// A repository revision present in the cache: the folder apps load from.
public struct Snapshot: Sendable, Hashable {
    /// The repository pulled.
    public var repo: RepoID
    /// Whether it is a model, dataset or space repository.
    public var type: RepoType
    /// The commit the revision resolved to (40 hex characters); the snapshot folder is named after it.
    public var commit: String
    /// `<cache>/models--org--name/snapshots/<commit>`.
    public var folder: URL
    /// The selected files, all present under ``folder``.
    public var files: [RepoFilePath]
    /// Files fetched by this call (the others were cached already).
    public var filesDownloaded: Int
    /// Bytes received from the network by this call.
    public var bytesDownloaded: Int64
    /// Why the Hub was not asked (offline mode, or the error that made the cache answer instead); nil when
    /// the snapshot was checked against the Hub.
    public var answeredFromCacheBecause: String?
    /// Each Core ML model's compiled `.mlmodelc`, by its path in the snapshot, when the pull had a
    /// ``ModelCompiler``.
    public var compiledModels: [String: URL] = [:]
    /// What the signature check found, when the pull required a signature (`DownloadPolicy/signature`).
    public var signatureCheck: SignatureCheck?

    /// A snapshot value; pulls make these, tests and previews may too.
    public init(
        repo: RepoID, type: RepoType, commit: String, folder: URL, files: [RepoFilePath], filesDownloaded: Int = 0,
        bytesDownloaded: Int64 = 0
    ) {
        self.repo = repo
        self.type = type
        self.commit = commit
        self.folder = folder
        self.files = files
        self.filesDownloaded = filesDownloaded
        self.bytesDownloaded = bytesDownloaded
    }

    /// The path of one file of the snapshot.
    public func url(of path: RepoFilePath) -> URL { folder.appendingPathComponent(path.value) }
}
