import Crypto
import Foundation
import ModelDepotCache
import ModelDepotCore
import ModelDepotPlatform
import ModelDepotTransfer
import ModelDepotTrust
import Synchronization

/// Models shipped inside an app build (the folder `modeldepot export --layout app` writes, added to the app's
/// resources as `Models`): read in place, never written, never downloaded or deleted — the "bundled" storage
/// class. Their bytes are hashed against the bundle's lock once per build of the app and remembered, so launches
/// after the first cost a file read.
///
/// ```swift
/// let storage = ModelStorage()
/// var configuration = ModelManager.Configuration()
/// configuration.bundled = try BundledModels(storage: storage)   // <App>.app/Models
/// let models = try ModelManager(configuration: configuration)
/// try await models.verifyBundledModels()                     // hashes once per CFBundleVersion
/// let folder = models.localPath(try RepoID("sentence-transformers/all-MiniLM-L6-v2"))
/// ```
public struct BundledModels: Sendable {
    /// The bundle folder.
    public let folder: URL
    /// The bundle's lock: the repositories, commits and files it holds.
    public let lock: ModelLock
    /// Where verification is remembered (writable; never inside the bundle).
    public let records: URL
    /// The app build the verification is remembered for; nil means the bundle's own sizes and modification
    /// times stand in for it (no Info.plist: Linux, command-line tools).
    public let version: String?
    /// The lock file's SHA-256, read once: the bundle is read-only.
    let lockDigest: String

    /// Whether verification found the bytes to be the lock's, with what it cost.
    public enum Verification: Sendable, Equatable {
        /// Hashed now: this many bytes.
        case verified(bytes: Int64)
        /// Already verified for this build (or these sizes and times): nothing hashed.
        case alreadyVerified
    }

    /// Reads the bundle in `folder`: its lock, and a check that it holds exactly the lock's files in the app
    /// layout (no extra file, none missing, no link). Bytes are not hashed until ``verify()``.
    ///
    /// - Parameters:
    ///   - folder: the bundle folder (`export --layout app` wrote it).
    ///   - records: a writable folder to remember verification in (`ModelStorage.verificationRecordsDirectory`).
    ///   - version: the app's build (`CFBundleVersion`); nil to key verification on the files' sizes and times.
    /// - Throws: `invalidArgument` naming what is wrong with the folder.
    public init(folder: URL, records: URL, version: String?) throws {
        self.folder = folder
        (self.lock, _) = try ModelBundle.checkedLock(in: folder, layout: .app)
        self.lockDigest = try FileDigests.sha256(ofFileAt: folder.appendingPathComponent(ModelBundle.lockName).path)
        self.records = records
        self.version = version
    }

    /// The app's bundled models: its `Models` resource folder, verified once per `CFBundleVersion`.
    ///
    /// - Throws: `notCached` when the app has no `Models` folder; what ``init(folder:records:version:)`` throws.
    public init(storage: ModelStorage) throws {
        guard let folder = storage.folder(for: .bundled),
            FileManager.default.fileExists(atPath: folder.appendingPathComponent(ModelBundle.lockName).path)
        else {
            throw ModelDepotError(
                .notCached,
                "The app has no bundled models (a Models folder with \(ModelBundle.lockName) in its resources); write one with `modeldepot export --layout app`."
            )
        }
        try self.init(
            folder: folder, records: storage.verificationRecordsDirectory, version: storage.platform.bundleVersion)
    }

    /// The locked repository the bundle holds for `repo` at `revision` (its branch name or its commit); nil for
    /// any other. A nil `revision` takes whatever commit the bundle holds.
    public func repository(_ repo: RepoID, type: RepoType = .model, revision: String? = nil) -> ModelLock.Repository? {
        lock.repositories.first {
            $0.repo == repo && $0.type == type
                && (revision == nil || revision == $0.revision || revision?.lowercased() == $0.commit)
        }
    }

    /// The folder holding a bundled repository's files, or one file in it; nil when the bundle does not hold it.
    public func localPath(
        _ repo: RepoID, type: RepoType = .model, revision: String? = nil, file: String? = nil
    ) -> URL? {
        guard let repository = repository(repo, type: type, revision: revision) else { return nil }
        let root = folder.appendingPathComponent(ModelBundle.repositoryFolder(repository, layout: .app))
        guard let file else { return root }
        guard repository.files.contains(where: { $0.path == file }) else { return nil }
        return root.appendingPathComponent(file)
    }

    /// Whether the bundle's bytes were verified for this build; reads one small record, hashes nothing.
    public var isVerified: Bool {
        guard let stored = try? Data(contentsOf: recordFile), let key = try? verificationKey() else { return false }
        return stored == key
    }

    /// Hashes every bundled file against the lock, unless that was done for this build already.
    ///
    /// - Throws: `checksumMismatch` naming the first file whose size or digest is not the lock's (the app build
    ///   is damaged; nothing is remembered, so the next launch checks again), file system errors.
    @discardableResult
    public func verify() throws -> Verification {
        let key = try verificationKey()
        if let stored = try? Data(contentsOf: recordFile), stored == key { return .alreadyVerified }
        let files = lock.repositories.flatMap { repository in repository.files.map { (repository, $0) } }
        // What the concurrent workers found, by the file's place in the lock (the first is reported).
        let problems = Mutex<[Int: String]>([:])
        // One file per core; a model's largest file bounds the time either way.
        DispatchQueue.concurrentPerform(iterations: files.count) { index in
            let (repository, file) = files[index]
            let url = folder.appendingPathComponent(ModelBundle.relativePath(repository, file, layout: .app))
            if let problem = file.mismatch(at: url) {
                let message = "\(repository.repo)/\(file.path) in the app's bundled models: \(problem)"
                problems.withLock { $0[index] = message }
            }
        }
        if let first = problems.withLock({ found in found.keys.min().flatMap { found[$0] } }) {
            throw ModelDepotError(
                .checksumMismatch, "\(first); the app build is damaged: rebuild it from a verified export.")
        }
        try FileManager.default.createDirectory(at: records, withIntermediateDirectories: true)
        try HubCache.writeAtomically(key, to: recordFile)
        return .verified(bytes: files.reduce(0) { $0 + $1.1.size })
    }

    /// One record per bundle folder (apps may ship more than one).
    var recordFile: URL {
        let name = SHA256.hash(data: Data(folder.standardizedFileURL.path.utf8)).hexString.prefix(32)
        return records.appendingPathComponent("\(name).txt")
    }

    /// What a verification is remembered under: the lock's digest and the build, or, without a build number, every
    /// file's size and modification time (a rebuilt bundle changes them).
    func verificationKey() throws -> Data {
        var parts = ["lock sha256:\(lockDigest)"]
        if let version {
            parts.append("build \(version)")
        } else {
            for repository in lock.repositories {
                for file in repository.files {
                    let relative = ModelBundle.relativePath(repository, file, layout: .app)
                    // The platform layer's stat, whose privacy manifest declares the file-timestamp reason.
                    guard let status = FileStatus(path: folder.appendingPathComponent(relative).path) else {
                        throw ModelDepotError(.fileSystem, "Cannot read \(relative) in the bundled models.")
                    }
                    parts.append("\(relative) \(status.size) \(status.modifiedNanoseconds)")
                }
            }
        }
        return Data((parts.joined(separator: "\n") + "\n").utf8)
    }

}
