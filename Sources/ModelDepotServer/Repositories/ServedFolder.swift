import Foundation
import Logging
import ModelDepotPlatform
import Synchronization

/// A folder the mirror serves from, and the rule every served path obeys: its real path (all links
/// resolved, by `realpath(3)`) lies inside the folder's real path, and no component below the folder is
/// hidden. Links are what make this hard — `ROOT/acme/evil -> /etc`, or `ROOT/acme/tiny/cfg -> .git/config`
/// — so each link is resolved and judged by where it really leads, never by its name.
struct ServedFolder: Sendable {
    /// The folder's real path, without a trailing `/`.
    let realPath: String
    /// The folder at ``realPath`` when the server started (device and inode); nil if there was none.
    private let identity: (device: UInt64, inode: UInt64)?
    private let skipped: SkippedEntryLog

    init(_ folder: URL, logger: Logger) {
        let standardized = folder.standardizedFileURL.path
        var path = Self.realPath(of: standardized) ?? standardized
        while path.count > 1, path.hasSuffix("/") { path.removeLast() }
        realPath = path
        identity = FileStatus(path: path, followingLinks: false).flatMap {
            $0.kind == .folder ? ($0.device, $0.inode) : nil
        }
        skipped = SkippedEntryLog(logger: logger)
    }

    /// Whether `realPath` is still the folder it was at start and not a link: what lets a path built on it with
    /// link-free components below be taken as real without `realpath`. (Folders above the root are the
    /// operator's, as for any server given a path; a root moved away and replaced by a link is not the root.)
    func isStillItself() -> Bool {
        guard let identity, let status = FileStatus(path: realPath, followingLinks: false) else { return false }
        return status.kind == .folder && status.device == identity.device && status.inode == identity.inode
    }

    /// `path` with every link resolved; nil when it does not exist or cannot be resolved.
    static func realPath(of path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// The first component of `path` (an absolute path that does not resolve) that is a link leading nowhere;
    /// nil when the path fails to resolve only because something in it does not exist.
    static func danglingLink(on path: String) -> String? {
        var prefix = ""
        for component in path.split(separator: "/") {
            prefix += "/" + component
            if realPath(of: prefix) != nil { continue }
            return FileStatus(path: prefix, followingLinks: false)?.kind == .link ? prefix : nil
        }
        return nil
    }

    /// The components of `realPath` below this folder, or nil when it is not inside it (the folder itself
    /// gives an empty list).
    func componentsBelow(_ realPath: String) -> [Substring]? {
        if realPath == self.realPath { return [] }
        let prefix = self.realPath == "/" ? "/" : self.realPath + "/"
        guard realPath.hasPrefix(prefix) else { return nil }
        return realPath.dropFirst(prefix.count).split(separator: "/")
    }

    /// Resolves `path` (which may pass through links) and returns its real path when it is inside this folder,
    /// at least `minimumDepth` components below it, and visible (no component starts with `.`). Otherwise logs
    /// the entry once, naming `shownAs`, and returns nil.
    func servablePath(_ path: String, minimumDepth: Int, shownAs: String) -> String? {
        guard let real = Self.realPath(of: path) else {
            // Most paths that do not resolve were never there (a request for a repository nobody has); only a
            // link whose target is gone is worth a warning.
            if let link = Self.danglingLink(on: path) { skipped.note(shownAs, "\(link) is a link to nothing") }
            return nil
        }
        guard let components = componentsBelow(real) else {
            skipped.note(shownAs, "it leads outside \(realPath) (to \(real))")
            return nil
        }
        guard components.count >= minimumDepth, !components.contains(where: { $0.hasPrefix(".") }) else {
            skipped.note(shownAs, "it leads to \(real), which is not a visible file of a repository")
            return nil
        }
        return real
    }
}

/// Logs each skipped entry once per server, so a link that leaves the root is reported without flooding the
/// log on every request that lists its repository.
final class SkippedEntryLog: Sendable {
    private let logger: Logger
    private let seen = Mutex(Set<String>())

    init(logger: Logger) { self.logger = logger }

    func note(_ entry: String, _ reason: String) {
        guard seen.withLock({ $0.insert(entry).inserted }) else { return }
        logger.warning("not serving \(entry): \(reason)")
    }
}
