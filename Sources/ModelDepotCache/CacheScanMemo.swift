import Foundation
import ModelDepotPlatform
import Synchronization

/// Repository reports kept between scans of one cache, so that a screen asked for again and again (a web page,
/// a mirror's dashboard polled every second) does not read every link and blob each time: with 10,000 cached
/// files a full scan is 20,000 system calls.
///
/// A kept report is used again only while its repository's fingerprint is unchanged: the modification times
/// and inodes of the repository folder, `blobs/`, `refs/` and every ref file, and every folder under
/// `snapshots/`. Any download, deletion, repair or ref update changes one of them. What it cannot see is a blob
/// rewritten in place (its size) and reads of blobs (their access times), so a report is trusted for at most
/// ``maximumAge``; `verify` reads every byte regardless.
package final class CacheScanMemo: Sendable {
    /// The longest a kept report is used without reading its repository again.
    package let maximumAge: Duration
    private let clock = ContinuousClock()
    private let kept = Mutex<
        [String: (fingerprint: [Int64], at: ContinuousClock.Instant, report: CachedRepositoryReport)]
    >(
        [:])

    package init(maximumAge: Duration = .seconds(60)) {
        self.maximumAge = maximumAge
    }

    func report(for folder: String, fingerprint: [Int64]) -> CachedRepositoryReport? {
        let now = clock.now
        return kept.withLock { kept in
            guard let entry = kept[folder], entry.fingerprint == fingerprint, now - entry.at < maximumAge else {
                return nil
            }
            return entry.report
        }
    }

    func keep(_ report: CachedRepositoryReport, for folder: String, fingerprint: [Int64]) {
        let now = clock.now
        kept.withLock { $0[folder] = (fingerprint, now, report) }
    }

    /// Forgets one repository's report: for changes its fingerprint cannot see (access times set on purpose).
    package func forget(_ folder: String) {
        _ = kept.withLock { $0.removeValue(forKey: folder) }
    }

    /// Forgets repositories whose folders a scan no longer found.
    func retain(only folders: Set<String>) {
        kept.withLock { kept in kept = kept.filter { folders.contains($0.key) } }
    }

    /// What changes when a repository's files, revisions or refs change (see the type's description).
    static func fingerprint(of folder: String) -> [Int64] {
        var values: [Int64] = []
        func add(_ path: String) {
            if let status = FileStatus(path: path, followingLinks: false) {
                values += [status.modifiedNanoseconds, Int64(bitPattern: status.inode), status.size]
            } else {
                values.append(-1)
            }
        }
        add(folder)
        add(folder + "/blobs")
        add(folder + "/refs")
        for ref in CacheScanner.walkFiles(folder + "/refs").sorted() { add(folder + "/refs/" + ref) }
        var pending = [folder + "/snapshots"]
        while let next = pending.popLast() {
            add(next)
            for entry in Directory.entries(next) where entry.kind == .folder {
                pending.append(next + "/" + entry.name)
            }
        }
        return values
    }
}
