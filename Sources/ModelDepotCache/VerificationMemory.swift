import Foundation
import ModelDepotPlatform

/// Remembers which blobs of a repository were verified by hash, keyed by size and modification time, so
/// readiness checks stay cheap: a blob whose size and mtime still match its record needs no re-hash.
///
/// Kept in `<repo folder>/.modeldepot/verified.json`, where Python's cache tools do not look (they read
/// `snapshots/`, `refs/` and `blobs/` only) and from where deleting the repository removes it.
package struct VerificationMemory: Sendable {
    struct Record: Codable, Sendable, Equatable {
        var size: Int64
        var modified: Int64
        var ok: Bool
    }

    let file: URL
    private(set) var records: [String: Record]

    package init(repository: CachedRepository) {
        file = repository.folder.appendingPathComponent(".modeldepot/verified.json")
        records =
            (FileManager.default.contents(atPath: file.path)).flatMap {
                try? JSONDecoder().decode([String: Record].self, from: $0)
            } ?? [:]
    }

    /// The remembered outcome for a blob file, if its size and mtime still match: true good, false bad.
    package func outcome(forBlob path: String) -> Bool? {
        guard let record = records[(path as NSString).lastPathComponent], let now = Self.identity(of: path),
            now.size == record.size, now.modified == record.modified
        else { return nil }
        return record.ok
    }

    package mutating func remember(blob path: String, ok: Bool) {
        guard let identity = Self.identity(of: path) else { return }
        records[(path as NSString).lastPathComponent] = Record(size: identity.size, modified: identity.modified, ok: ok)
    }

    /// Writes the records, merged over what another process may have written meanwhile.
    package func save() {
        var merged =
            (FileManager.default.contents(atPath: file.path)).flatMap {
                try? JSONDecoder().decode([String: Record].self, from: $0)
            } ?? [:]
        merged.merge(records) { _, mine in mine }
        guard let data = try? JSONEncoder().encode(merged) else { return }
        try? HubCache.writeAtomically(data, to: file)
    }

    static func identity(of path: String) -> (size: Int64, modified: Int64)? {
        FileStatus(path: path).map { ($0.size, $0.modifiedNanoseconds) }
    }
}
