#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Opening a file that must be a plain file, for reading, when what is at the path may have been swapped since it
/// was checked: a link is not followed (`O_NOFOLLOW`: opening one fails with `ELOOP`), and a FIFO or a device
/// does not block the open (`O_NONBLOCK`) but is refused right after it by `fstat`.
package enum RegularFile {
    /// What opening gave.
    package enum Opened: Sendable {
        /// An open descriptor (blocking again) of a regular file, and its status; the caller closes it.
        case file(descriptor: Int32, status: FileStatus)
        /// The path is a link (not followed).
        case link
        /// The path is a folder, a FIFO, a socket or a device (nothing was read).
        case notRegular
        /// `open` failed with this `errno`.
        case failed(Int32)
    }

    /// Opens `path` for reading, if it is a regular file.
    package static func open(_ path: String) -> Opened {
        let descriptor = systemOpen(path)
        guard descriptor >= 0 else {
            let code = errno
            return code == ELOOP || code == EMLINK ? .link : .failed(code)
        }
        guard let status = FileStatus(descriptor: descriptor), status.kind == .file else {
            close(descriptor)
            return .notRegular
        }
        let flags = fcntl(descriptor, F_GETFL)
        if flags >= 0 { _ = fcntl(descriptor, F_SETFL, flags & ~O_NONBLOCK) }
        return .file(descriptor: descriptor, status: status)
    }

    private static func systemOpen(_ path: String) -> Int32 {
        #if canImport(Darwin)
            Darwin.open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        #elseif canImport(Musl)
            Musl.open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        #else
            Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        #endif
    }
}
