import Foundation
import ModelDepotCore

/// The file listing of one commit as Python 2.4 records it in `trees/<commit>.json`:
/// `{"format_version": 1, "files": {path: {"size", "blob_id", ["lfs_sha256", "lfs_size"], ["xet_hash"]}}}`.
///
/// It tells, without the network, which files a snapshot should have (so an incomplete snapshot is known to
/// be incomplete) and what each one's blob is called.
package struct RecordedTree: Sendable, Hashable {
    package struct File: Sendable, Hashable {
        package var size: Int64
        /// The git blob id (of the LFS pointer for LFS files).
        package var blobID: String
        package var lfsSHA256: String?
        package var lfsSize: Int64?
        /// The Xet hash the listing gave (64 hex digits), when the file can be pulled through Xet.
        package var xetHash: String?

        package init(
            size: Int64, blobID: String, lfsSHA256: String? = nil, lfsSize: Int64? = nil, xetHash: String? = nil
        ) {
            self.size = size
            self.blobID = blobID
            self.lfsSHA256 = lfsSHA256
            self.lfsSize = lfsSize
            self.xetHash = xetHash
        }

        /// The blob's name in the cache: the SHA-256 for LFS files, else the git blob id.
        package var etag: String { lfsSHA256 ?? blobID }
    }

    static let formatVersion = 1

    /// `text` when it is a Xet hash as Xet prints them (64 lowercase hex digits); a listing's other values are
    /// dropped, so the file goes by HTTP.
    static func xetHash(_ text: String) -> String? {
        text.utf8.count == 64 && text.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) })
            ? text : nil
    }

    package var files: [RepoFilePath: File]

    package init(files: [RepoFilePath: File]) {
        self.files = files
    }

    /// The files of a tree listing (folders dropped), refusing any path that is unsafe to join to a folder.
    package init(entries: [RepoTreeEntry]) throws {
        var files: [RepoFilePath: File] = [:]
        for entry in entries where entry.isFile {
            let path = try RepoFilePath(entry.path)
            guard HubEncoding.isSafeBlobName(entry.etag) else {
                throw ModelDepotError(
                    .protocolViolation, "The Hub listed \(path) with the id '\(entry.etag)', which cannot name a blob.")
            }
            files[path] = File(
                size: entry.lfs?.size ?? entry.size, blobID: entry.oid, lfsSHA256: entry.lfs?.oid,
                lfsSize: entry.lfs?.size, xetHash: entry.xetHash.flatMap(Self.xetHash))
        }
        self.files = files
    }

    init(json data: Data) throws {
        guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any],
            object["format_version"] as? Int == Self.formatVersion,
            let files = object["files"] as? [String: [String: Any]]
        else {
            throw ModelDepotError(.protocolViolation, "Not a version \(Self.formatVersion) tree cache.")
        }
        var parsed: [RepoFilePath: File] = [:]
        for (path, info) in files {
            guard let size = (info["size"] as? NSNumber)?.int64Value, let blobID = info["blob_id"] as? String else {
                throw ModelDepotError(.protocolViolation, "The tree cache entry for \(path) is malformed.")
            }
            let file = File(
                size: size, blobID: blobID, lfsSHA256: info["lfs_sha256"] as? String,
                lfsSize: (info["lfs_size"] as? NSNumber)?.int64Value,
                xetHash: (info["xet_hash"] as? String).flatMap(Self.xetHash))
            guard HubEncoding.isSafeBlobName(file.etag) else {
                throw ModelDepotError(.protocolViolation, "The tree cache names an unsafe blob for \(path).")
            }
            parsed[try RepoFilePath(path)] = file
        }
        self.files = parsed
    }

    func json() throws -> Data {
        var files: [String: Any] = [:]
        for (path, file) in self.files {
            var info: [String: Any] = ["size": file.size, "blob_id": file.blobID]
            if let sha256 = file.lfsSHA256 {
                info["lfs_sha256"] = sha256
                info["lfs_size"] = file.lfsSize ?? file.size
            }
            if let xet = file.xetHash { info["xet_hash"] = xet }
            files[path.value] = info
        }
        let object: [String: Any] = ["format_version": Self.formatVersion, "files": files]
        return try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
    }
}
