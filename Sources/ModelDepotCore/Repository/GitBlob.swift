import Crypto

/// Git's object ids for repository files: what the Hub reports as `oid` and as the `ETag` of small files.
package enum GitBlob {
    /// The git blob id of `contents`: SHA-1 over `blob <size>\0` followed by the bytes.
    package static func id(of contents: some Sequence<UInt8>) -> String {
        let bytes = Array(contents)
        var sha = Insecure.SHA1()
        sha.update(data: Array("blob \(bytes.count)\0".utf8))
        sha.update(data: bytes)
        return sha.finalize().hexString
    }

    /// The text git stores in place of an LFS-tracked file.
    package static func lfsPointer(sha256: String, size: Int64) -> String {
        "version https://git-lfs.github.com/spec/v1\noid sha256:\(sha256)\nsize \(size)\n"
    }
}
