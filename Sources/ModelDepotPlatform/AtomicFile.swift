#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Replaces small files whole: a temporary file beside the target, then `rename`, so a reader sees the old
/// contents or the new, never a mix.
///
/// No `fsync`: Foundation's `Data.write(to:)` syncs every file it writes, which made each resume-sidecar
/// save wait for the disk (a 256 MiB download saves ~256 of them) on a thread of the cooperative pool. The
/// rename alone is atomic for process crashes; after a power loss, what a sidecar claims is re-checked by
/// the whole-file hash.
package enum AtomicFile {
    /// Writes `bytes` to `path`. `temporarySuffix` names the temporary file (`<path><suffix>`); callers that
    /// may write the same path concurrently pass a unique one. `mode` is the new file's permissions (less the
    /// umask): `0o600` for files that may name private URLs.
    package static func replace(
        _ bytes: some Collection<UInt8>, atPath path: String, temporarySuffix: String = ".tmp", mode: mode_t = 0o644
    ) throws(SystemCallError) {
        let temporary = path + temporarySuffix
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        guard descriptor >= 0 else { throw SystemCallError("Cannot create \(temporary)", code: errno) }
        let failure = Array(bytes).withUnsafeBytes { buffer -> Int32 in
            var written = 0
            while written < buffer.count {
                let result = write(descriptor, buffer.baseAddress! + written, buffer.count - written)
                if result < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                written += result
            }
            return 0
        }
        close(descriptor)
        guard failure == 0 else {
            unlink(temporary)
            throw SystemCallError("Cannot write to \(temporary)", code: failure)
        }
        guard rename(temporary, path) == 0 else {
            let code = errno
            unlink(temporary)
            throw SystemCallError("Cannot move \(temporary) to \(path)", code: code)
        }
    }

    /// Moves the finished file at `from` into place at `path` in one step (`rename(2)`, replacing what is there),
    /// first giving it `mode` (less the umask is not applied: the mode is set as given), as a finished download is.
    package static func moveIntoPlace(_ from: String, atPath path: String, mode: mode_t = 0o644) throws(SystemCallError)
    {
        chmod(from, mode)
        guard rename(from, path) == 0 else { throw SystemCallError("Cannot move \(from) to \(path)", code: errno) }
    }
}
