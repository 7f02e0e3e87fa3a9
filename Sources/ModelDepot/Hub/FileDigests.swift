import Crypto
import Foundation

/// Streaming digests of files on disk, in constant memory.
public enum FileDigests {
    /// Lowercase hex SHA-256 of the file at `path`.
    public static func sha256(ofFileAt path: String) throws -> String {
        try PrefixHasher.hashFile(atPath: path)
    }

    /// The git blob id (SHA-1 over `blob <size>\0` and the bytes) of the file at `path`.
    public static func gitBlobID(ofFileAt path: String) throws -> String {
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
