import Foundation

extension Data {
    /// Writes the bytes to `url` (through a temporary file and a rename) without `fsync`.
    ///
    /// Foundation's `write(to:)` on Linux fsyncs every file it writes (seen with strace), and a test writes its
    /// fixtures from `async` code, on a thread of Swift's cooperative pool: while other tests stream hundreds of
    /// megabytes to the same disk, one such fsync held that thread for seconds, and every in-process server of
    /// every test waited with it. Fixtures need no durability.
    public func writeUnsynced(to url: URL) throws {
        let temporary = url.path + ".\(UInt32.random(in: 0...UInt32.max)).unsynced"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path]) }
        var written = 0
        let complete = withUnsafeBytes { bytes -> Bool in
            while written < bytes.count {
                let result = Foundation.write(descriptor, bytes.baseAddress! + written, bytes.count - written)
                if result < 0, errno == EINTR { continue }
                guard result > 0 else { return false }
                written += result
            }
            return true
        }
        close(descriptor)
        guard complete, rename(temporary, url.path) == 0 else {
            unlink(temporary)
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path])
        }
    }
}
