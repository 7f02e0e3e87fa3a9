import Foundation
import ModelDepotCore
import ModelDepotPlatform

/// A Hub cache folder laid out exactly as Python's `huggingface_hub` lays it out (the protocol note, §4), so
/// that either tool sees what the other downloaded.
///
/// ```
/// <root>/CACHEDIR.TAG
/// <root>/.locks/models--org--name/<etag>.lock
/// <root>/models--org--name/{blobs,refs,snapshots,.no_exist,trees}/…
/// ```
public struct HubCache: Sendable, Hashable {
    /// The cache folder (`…/huggingface/hub`).
    public let root: URL

    /// The cache at `root` (created on the first write).
    public init(root: URL) {
        self.root = root.standardizedFileURL
    }

    /// The platform's cache (``ModelStorage/cacheDirectory``): the one `HF_HUB_CACHE` / `HF_HOME` point at,
    /// Python's default on Linux and the macOS command line, Application Support in an app.
    public init(environment: HubEnvironment = HubEnvironment()) {
        self.init(root: ModelStorage(environment: environment).cacheDirectory)
    }

    /// The folder of one repository (it may not exist yet).
    package func repository(_ repo: RepoID, type: RepoType = .model) -> CachedRepository {
        CachedRepository(
            cache: self, id: repo, type: type,
            folder: root.appendingPathComponent(repo.cacheFolderName(type: type), isDirectory: true))
    }

    /// Writes `CACHEDIR.TAG` (once) so that backup tools skip the cache.
    package func writeCacheDirectoryTag() throws {
        let tag = root.appendingPathComponent("CACHEDIR.TAG")
        guard !FileManager.default.fileExists(atPath: tag.path) else { return }
        try Self.createFolder(root)
        let text = """
            Signature: 8a477f597d28d172789f06886806bc55
            # This folder is a model cache (Hugging Face Hub layout), written by ModelDepot.
            # Backup tools that honour cache directory tags skip it: see https://bford.info/cachedir/

            """
        try? Data(text.utf8).write(to: tag, options: .atomic)
        // The same promise to Apple's backup (iCloud, Time Machine's exclusion list): the models come back by
        // downloading them again.
        BackupExclusion.exclude(root)
        // Files a background relaunch writes on a locked device must be writable then.
        FileProtection.untilFirstUnlock(root)
    }

    package static func createFolder(_ url: URL) throws {
        do {
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        } catch {
            throw ModelDepotError(
                .fileSystem,
                "Cannot create \(url.path): \(error.localizedDescription). Check the permissions of the cache folder, or choose another (HF_HUB_CACHE).",
                underlying: error)
        }
    }

    /// Writes `data` to `url` through a unique temporary file and a rename, so readers see all or nothing.
    package static func writeAtomically(_ data: Data, to url: URL) throws {
        try createFolder(url.deletingLastPathComponent())
        let suffix = ".\(String(UInt32.random(in: 0...UInt32.max), radix: 16)).tmp"
        do {
            try AtomicFile.replace(data, atPath: url.path, temporarySuffix: suffix)
        } catch {
            throw POSIXFailure.error(error.operation, errno: error.code)
        }
    }
}
