import Foundation
import ModelDepotCore

/// A folder holding a lock and exactly the files it names, as `export` writes it and `import` reads it: the way
/// to carry models to a machine without a network, or into an app's build. Two layouts:
///
/// ```
/// bundle (to import into a cache)               app (to ship inside an app, read in place)
/// BUNDLE/modeldepot.lock                         Models/modeldepot.lock
/// BUNDLE/models/<org>/<name>/<path>              Models/models--<org>--<name>/<path>
/// BUNDLE/datasets/<org>/<name>/<path>            Models/datasets--<org>--<name>/<path>
/// ```
///
/// The app layout gives each repository one folder at the top, named as the Hub cache names it, so an app
/// project adds `Models` as one folder reference and finds a model's folder with a single lookup; its files are
/// written read-only. `BundledModels` reads it.
public enum ModelBundle {
    /// The lock's name inside a bundle.
    public static let lockName = "modeldepot.lock"

    /// How a bundle folder arranges its files.
    public enum Layout: String, Sendable, CaseIterable {
        /// `models/<org>/<name>/<path>`: for `import` into another machine's cache.
        case bundle
        /// `models--<org>--<name>/<path>`, read-only files: for an app's `Models` resource folder.
        case app
    }

    /// Where `file` of `repository` lives inside a bundle.
    public static func relativePath(
        _ repository: ModelLock.Repository, _ file: ModelLock.File, layout: Layout = .bundle
    ) -> String {
        "\(repositoryFolder(repository, layout: layout))/\(file.path)"
    }

    /// The folder holding `repository`'s files inside a bundle.
    public static func repositoryFolder(_ repository: ModelLock.Repository, layout: Layout) -> String {
        switch layout {
        case .bundle: "\(repository.type.rawValue)s/\(repository.repo)"
        case .app: repository.repo.cacheFolderName(type: repository.type)
        }
    }

    /// The bundle's lock and layout, once the folder holds exactly what the lock names: no file missing, none
    /// extra, no link, nothing but folders and regular files. Every refusal is an `invalidArgument` error naming
    /// the entry. The layout is the one whose first file is there (`layout` insists on one).
    public static func checkedLock(in folder: URL, layout: Layout? = nil) throws -> (ModelLock, Layout) {
        let lock = try ModelLock.load(folder.appendingPathComponent(lockName))
        let found = try regularFiles(in: folder)
        let detected =
            layout ?? lock.repositories.first.flatMap { repository in
                repository.files.first.flatMap { file in
                    Layout.allCases.first { found.contains(relativePath(repository, file, layout: $0)) }
                }
            } ?? .bundle
        try check(found, against: lock, layout: detected)
        return (lock, detected)
    }

    /// The relative paths of the folder's files; refuses links and anything that is not a folder or a file.
    static func regularFiles(in folder: URL) throws -> Set<String> {
        let keys: [URLResourceKey] = [.isSymbolicLinkKey, .isRegularFileKey, .isDirectoryKey]
        guard let walk = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: keys) else {
            throw ModelDepotError(.fileSystem, "Cannot read the bundle folder \(folder.path).")
        }
        var found = Set<String>()
        let root = folder.standardizedFileURL.path + "/"
        for case let url as URL in walk {
            let relative = String(url.standardizedFileURL.path.dropFirst(root.count))
            let values = try url.resourceValues(forKeys: Set(keys))
            if values.isSymbolicLink == true {
                throw ModelDepotError(
                    .invalidArgument, "The bundle holds a link, \(relative); bundles hold plain files only.")
            }
            if values.isDirectory == true { continue }
            guard values.isRegularFile == true else {
                throw ModelDepotError(.invalidArgument, "The bundle holds \(relative), which is not a regular file.")
            }
            found.insert(relative)
        }
        return found
    }

    /// Refuses a bundle whose files are not exactly the lock's (and the lock itself).
    package static func check(_ names: Set<String>, against lock: ModelLock, layout: Layout = .bundle) throws {
        var expected = Set([lockName])
        for repository in lock.repositories {
            for file in repository.files { expected.insert(relativePath(repository, file, layout: layout)) }
        }
        if let extra = names.subtracting(expected).sorted().first {
            throw ModelDepotError(
                .invalidArgument, "The bundle holds \(extra), which its lock does not name; refusing the bundle.")
        }
        if let missing = expected.subtracting(names).sorted().first {
            throw ModelDepotError(.invalidArgument, "The bundle lacks \(missing), which its lock names.")
        }
    }
}
