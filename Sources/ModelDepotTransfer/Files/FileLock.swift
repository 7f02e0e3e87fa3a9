import Foundation
import ModelDepotCore

/// An exclusive `flock` on a lock file, shared with other processes.
///
/// The lock file is removed on release. A waiter that obtains the lock checks that the file it locked is
/// still the one at the path (the previous holder may have removed it) and tries again if not, so removing
/// lock files is safe.
package final class FileLock: Sendable {
    package let path: String
    private let descriptor: Int32

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
    }

    /// Takes the lock, polling every `pollInterval` on `clock` while another process holds it.
    package static func acquire(path: String, clock: EngineClock, pollInterval: Duration = .milliseconds(50))
        async throws
        -> FileLock
    {
        while true {
            try Task.checkCancellation()
            if let lock = try attempt(path: path) { return lock }
            try await clock.sleep(for: pollInterval)
        }
    }

    /// Takes the lock only if nobody holds it now; nil when another process does.
    package static func attempt(path: String) throws -> FileLock? {
        while true {
            let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o664)
            guard descriptor >= 0 else {
                throw POSIXFailure.error("Cannot create the lock file \(path)", errno: errno)
            }
            if flock(descriptor, LOCK_EX | LOCK_NB) == 0 {
                if isStillAtPath(descriptor: descriptor, path: path) {
                    return FileLock(path: path, descriptor: descriptor)
                }
                _ = close(descriptor)
                continue
            }
            let code = errno
            _ = close(descriptor)
            guard code == EWOULDBLOCK || code == EINTR else {
                throw POSIXFailure.error("Cannot lock \(path)", errno: code)
            }
            return nil
        }
    }

    /// Releases the lock, removing the lock file first unless `keepingFile` (a lock file other tools share
    /// and expect to stay, like the Hub cache's `.locks/`).
    package func release(keepingFile: Bool = false) {
        if !keepingFile { unlink(path) }
        _ = close(descriptor)
    }

    private static func isStillAtPath(descriptor: Int32, path: String) -> Bool {
        var opened = stat()
        var current = stat()
        guard fstat(descriptor, &opened) == 0, stat(path, &current) == 0 else { return false }
        return opened.st_ino == current.st_ino && opened.st_dev == current.st_dev
    }
}
