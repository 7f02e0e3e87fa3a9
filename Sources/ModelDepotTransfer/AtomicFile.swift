import Foundation

/// Replaces small files whole: a temporary file beside the target, then `rename`, so a reader sees the old
/// contents or the new, never a mix.
///
/// No `fsync`: Foundation's `Data.write(to:)` syncs every file it writes, which made each resume-sidecar
/// save wait for the disk (a 256 MiB download saves ~256 of them) on a thread of the cooperative pool. The
/// rename alone is atomic for process crashes; after a power loss, what a sidecar claims is re-checked by
/// the whole-file hash.
package enum AtomicFile {
    /// Writes `data` to `path`. `temporarySuffix` names the temporary file (`<path><suffix>`); callers that
    /// may write the same path concurrently pass a unique one. `mode` is the new file's permissions (less the
    /// umask): `0o600` for files that may name private URLs.
    package static func replace(
        _ data: Data, atPath path: String, temporarySuffix: String = ".tmp", mode: mode_t = 0o644
    ) throws {
        let temporary = path + temporarySuffix
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        guard descriptor >= 0 else { throw POSIXFailure.error("Cannot create \(temporary)", errno: errno) }
        let file = LocalPartialFile(descriptor: descriptor, path: temporary)
        do {
            try data.withUnsafeBytes { try file.write($0, at: 0) }
            file.close()
        } catch {
            file.close()
            unlink(temporary)
            throw error
        }
        guard rename(temporary, path) == 0 else {
            let code = errno
            unlink(temporary)
            throw POSIXFailure.error("Cannot move \(temporary) to \(path)", errno: code)
        }
    }
}
