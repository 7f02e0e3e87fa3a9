import Crypto
import Foundation
import ModelDepotCore

/// Streaming digests of files on disk, in constant memory.
package enum FileDigests {
    /// Lowercase hex SHA-256 of the file at `path`.
    package static func sha256(ofFileAt path: String) throws -> String {
        try PrefixHasher.hashFile(atPath: path)
    }

    /// Lowercase hex SHA-256 of each consecutive `pieceSize` bytes of the file at `path`, the last piece possibly
    /// shorter, an empty file none (the pieces model-signing's "shards" serialization signs).
    package static func sha256(ofPiecesOfFileAt path: String, pieceSize: Int64) throws -> [String] {
        try PrefixHasher.hashPieces(atPath: path, pieceSize: pieceSize)
    }

    /// The digest a cache blob's name promises, computed from its bytes: SHA-256 for a 64-hex name (an LFS
    /// file), the git blob id for a 40-hex one; nil, without reading, for names that are not hashes (another
    /// mirror's ETags). The blob is good when the result equals its name.
    package static func digestPromisedByName(ofBlobAt path: String) throws -> String? {
        let name = (path as NSString).lastPathComponent
        if HubEncoding.isSHA256(name) { return try sha256(ofFileAt: path) }
        if HubEncoding.isGitID(name) { return try gitBlobID(ofFileAt: path) }
        return nil
    }

    /// The git blob id (SHA-1 over `blob <size>\0` and the bytes) of the file at `path`.
    package static func gitBlobID(ofFileAt path: String) throws -> String {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw ModelDepotError(.fileSystem, "Cannot open \(path) to hash it.")
        }
        defer { try? handle.close() }
        let size = try handle.seekToEnd()
        try handle.seek(toOffset: 0)
        var sha = Insecure.SHA1()
        sha.update(data: Array("blob \(size)\0".utf8))
        while let chunk = try handle.read(upToCount: 4 << 20), !chunk.isEmpty {
            sha.update(data: chunk)
        }
        return sha.finalize().hexString
    }
}
