import Crypto
import Foundation
import ModelDepotCore
import ModelDepotHub
import ModelDepotTransfer

/// The JSON shapes of the Hub API (the protocol note, §1.2–1.5).
enum HubJSON {
    static func info(_ snapshot: RepoSnapshot, blobs: Bool) -> [String: Any] {
        var info = summary(snapshot)
        info["siblings"] = snapshot.files.map { file -> [String: Any] in
            var sibling: [String: Any] = ["rfilename": file.path.value]
            if blobs {
                sibling["size"] = file.size
                sibling["blobId"] = file.gitOID
                if let sha256 = file.sha256 {
                    sibling["lfs"] = ["size": file.size, "sha256": sha256, "pointerSize": file.pointerSize]
                }
            }
            return sibling
        }
        return info
    }

    /// The fields search results and info share.
    static func summary(_ snapshot: RepoSnapshot) -> [String: Any] {
        let lastModified = timestamp(snapshot.lastModified)
        return [
            "_id": snapshot.commit, "id": snapshot.id.description, "modelId": snapshot.id.description,
            "author": snapshot.id.namespace ?? "", "sha": snapshot.commit, "lastModified": lastModified,
            "createdAt": lastModified, "private": false, "gated": false, "disabled": false,
            "downloads": 0, "likes": 0, "tags": [String](),
        ]
    }

    static func refs(_ snapshot: RepoSnapshot) -> [String: Any] {
        [
            "branches": snapshot.branches.map {
                ["name": $0, "ref": "refs/heads/\($0)", "targetCommit": snapshot.commit]
            },
            "converts": [[String: Any]](), "tags": [[String: Any]](),
        ]
    }

    /// Entries under `path` (the root when nil); nil when `path` is neither a folder nor a file.
    static func tree(_ snapshot: RepoSnapshot, path: String?, recursive: Bool) -> [[String: Any]]? {
        let prefix = path.map { $0 + "/" } ?? ""
        if let path, let file = snapshot.file(at: path) { return [entry(file)] }
        let inside = snapshot.files.filter { $0.path.value.hasPrefix(prefix) }
        if path != nil && inside.isEmpty { return nil }
        if recursive {
            var folders = Set<String>()
            for file in inside {
                var components = file.path.components.dropLast()
                while !components.isEmpty {
                    let folder = components.joined(separator: "/")
                    if folder.hasPrefix(prefix) { folders.insert(folder) }
                    components = components.dropLast()
                }
            }
            return folders.sorted().map { folderEntry($0, snapshot: snapshot) } + inside.map(entry)
        }
        var folders = Set<String>()
        var entries: [[String: Any]] = []
        for file in inside {
            let rest = file.path.value.dropFirst(prefix.count)
            if let slash = rest.firstIndex(of: "/") {
                folders.insert(prefix + rest[..<slash])
            } else {
                entries.append(entry(file))
            }
        }
        return folders.sorted().map { folderEntry($0, snapshot: snapshot) } + entries
    }

    /// The entries of `paths` that exist, files and folders, in the order asked (the Hub leaves out the rest).
    static func pathsInfo(_ snapshot: RepoSnapshot, paths: [String]) -> [[String: Any]] {
        var seen = Set<String>()
        // Every folder of the snapshot, found once: a request of many paths costs files + paths, not their product.
        var folders: Set<Substring>? = nil
        return paths.compactMap { raw -> [String: Any]? in
            let path = raw.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
            guard !path.isEmpty, seen.insert(path).inserted else { return nil }
            if let file = snapshot.file(at: path) { return entry(file) }
            if folders == nil {
                folders = Set(
                    snapshot.files.flatMap { file in
                        let value = file.path.value
                        return value.indices.filter { value[$0] == "/" }.map { value[..<$0] }
                    })
            }
            guard folders!.contains(Substring(path)) else { return nil }
            return folderEntry(path, snapshot: snapshot)
        }
    }

    /// `entries` with the `lastCommit` the Hub adds when asked to expand them.
    static func expanded(_ entries: [[String: Any]], lastCommit: RepoCommit) -> [[String: Any]] {
        let summary: [String: Any] = ["id": lastCommit.id, "title": lastCommit.title, "date": lastCommit.date]
        return entries.map { entry in
            var entry = entry
            entry["lastCommit"] = summary
            return entry
        }
    }

    static func commits(_ commits: [RepoCommit]) -> [[String: Any]] {
        commits.map { commit in
            [
                "id": commit.id, "title": commit.title, "message": commit.message,
                "authors": commit.authors.map { ["user": $0.user] }, "date": commit.date,
            ]
        }
    }

    private static func entry(_ file: ServedFile) -> [String: Any] {
        var entry: [String: Any] = ["type": "file", "oid": file.gitOID, "size": file.size, "path": file.path.value]
        if let sha256 = file.sha256 {
            entry["lfs"] = ["oid": sha256, "size": file.size, "pointerSize": file.pointerSize]
        }
        return entry
    }

    private static func folderEntry(_ folder: String, snapshot: RepoSnapshot) -> [String: Any] {
        // A stable id for the folder's content (git would give its tree object id).
        var sha = Insecure.SHA1()
        for file in snapshot.files where file.path.value.hasPrefix(folder + "/") {
            sha.update(data: Array("\(file.path.value)\0\(file.etag)\n".utf8))
        }
        let oid = sha.finalize().hexString
        return ["type": "directory", "oid": oid, "size": 0, "path": folder]
    }

    /// `2024-05-01T12:00:00.250Z`, as the Hub writes times: milliseconds, UTC. Written by hand over `gmtime_r`:
    /// an `ISO8601DateFormatter` made per answer cost a quarter of `/api/models/{repo}`.
    static func timestamp(_ date: Date) -> String {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        var seconds = time_t(milliseconds.quotientAndRemainder(dividingBy: 1000).quotient)
        var fraction = milliseconds % 1000
        if fraction < 0 {
            fraction += 1000
            seconds -= 1
        }
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func padded(_ value: some BinaryInteger, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(padded(parts.tm_year + 1900, 4))-\(padded(parts.tm_mon + 1, 2))-\(padded(parts.tm_mday, 2))T"
            + "\(padded(parts.tm_hour, 2)):\(padded(parts.tm_min, 2)):\(padded(parts.tm_sec, 2)).\(padded(fraction, 3))Z"
    }
}
