import Dispatch
import Foundation
import ModelDepotCore
import ModelDepotHub
import ModelDepotPlatform
import ModelDepotTransfer
import Synchronization

/// Remembers file digests by (size, modification time, inode), so each file is hashed once, when it is
/// first needed — not on every request and not all at start-up. Saved as JSON in the server's state folder.
///
/// Hashing runs on a Dispatch queue of its own, off the Swift concurrency pool, so a multi-gigabyte file being hashed
/// does not stall the requests being served; concurrent requests for the same file wait for one hashing.
final class HashIndex: Sendable {
    struct Entry: Codable, Equatable, Sendable {
        var size: Int64
        var modifiedNanoseconds: Int64
        var inode: UInt64
        var gitOID: String
        var sha256: String?
    }

    private let storePath: String?
    private let entries: Mutex<[String: Entry]>
    private let inFlight = Mutex<[String: [CheckedContinuation<Entry, any Error>]]>([:])
    /// Whether entries were added since the last save: saving runs after every request, writing only then.
    private let dirty = Mutex(false)

    /// - Parameter storePath: where to persist the index; nil keeps it in memory.
    init(storePath: String?) {
        self.storePath = storePath
        var loaded: [String: Entry] = [:]
        if let storePath, let data = FileManager.default.contents(atPath: storePath) {
            loaded = (try? JSONDecoder().decode([String: Entry].self, from: data)) ?? [:]
        }
        entries = Mutex(loaded)
    }

    /// The digests of the file at `path`, computed now if the file is new or changed.
    func digests(ofFileAt path: String, size: Int64, modifiedNanoseconds: Int64, inode: UInt64, lfs: Bool) async throws
        -> Entry
    {
        if let known = entries.withLock({ $0[path] }), known.size == size,
            known.modifiedNanoseconds == modifiedNanoseconds,
            known.inode == inode, (known.sha256 != nil) == lfs
        {
            return known
        }
        return try await withCheckedThrowingContinuation { continuation in
            let first = inFlight.withLock { waiting -> Bool in
                defer { waiting[path, default: []].append(continuation) }
                return waiting[path] == nil
            }
            guard first else { return }
            // A queue of its own (Dispatch's overcommitting pool): on a shared concurrent queue, a small file's
            // hash waited behind every long hash the process was running.
            DispatchQueue(label: "ModelDepot.hash-index").async {
                let outcome = Result {
                    try Self.compute(
                        path: path, size: size, modifiedNanoseconds: modifiedNanoseconds, inode: inode, lfs: lfs)
                }
                if case .success(let entry) = outcome {
                    self.entries.withLock { $0[path] = entry }
                    self.dirty.withLock { $0 = true }
                }
                let waiters = self.inFlight.withLock { $0.removeValue(forKey: path) ?? [] }
                for waiter in waiters { waiter.resume(with: outcome) }
            }
        }
    }

    private static func compute(path: String, size: Int64, modifiedNanoseconds: Int64, inode: UInt64, lfs: Bool) throws
        -> Entry
    {
        var entry = Entry(size: size, modifiedNanoseconds: modifiedNanoseconds, inode: inode, gitOID: "", sha256: nil)
        if lfs {
            let sha = try FileDigests.sha256(ofFileAt: path)
            entry.sha256 = sha
            entry.gitOID = GitBlob.id(of: Array(GitBlob.lfsPointer(sha256: sha, size: size).utf8))
        } else {
            entry.gitOID = try FileDigests.gitBlobID(ofFileAt: path)
        }
        return entry
    }

    /// Writes the index to its store (atomically).
    func save() {
        guard let storePath,
            dirty.withLock({ dirty in
                defer { dirty = false }; return dirty
            })
        else { return }
        let snapshot = entries.withLock { $0 }
        guard let data = try? JSONEncoder().encode(snapshot) else { return }
        try? FileManager.default.createDirectory(
            atPath: (storePath as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        // Not Foundation's `write(to:)`, which fsyncs (this runs in a request's task, on the cooperative pool);
        // the index is a cache of digests, checked against each file's stamp when read.
        try? AtomicFile.replace(data, atPath: storePath, temporarySuffix: ".\(UInt32.random(in: 0...UInt32.max)).tmp")
    }
}
