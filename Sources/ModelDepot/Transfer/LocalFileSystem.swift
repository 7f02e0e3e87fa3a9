import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The real disk, through POSIX calls: `pwrite`/`pread` at offsets, `fallocate` where available, `statvfs`.
public struct LocalFileSystem: DownloadFileSystem {
    public init() {}

    public func availableSpace(forPath path: String) throws -> Int64 {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else {
            throw POSIXFailure.error("Cannot read the free space of \(path)", errno: errno)
        }
        return Int64(info.f_bavail) * Int64(info.f_frsize)
    }

    /// Partial files are the owner's alone until they are verified and renamed into place, where they get the
    /// permissions a new file gets (``FileCreationMode/standard``).
    public func openPartialFile(atPath path: String) throws -> any PartialFile {
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw POSIXFailure.error("Cannot open \(path) for writing", errno: errno)
        }
        return LocalPartialFile(descriptor: descriptor, path: path)
    }
}

struct LocalPartialFile: PartialFile {
    let descriptor: Int32
    let path: String

    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws {
        var written = 0
        while written < bytes.count {
            let result = pwrite(
                descriptor, bytes.baseAddress! + written, bytes.count - written, off_t(offset) + off_t(written))
            if result < 0 {
                if errno == EINTR { continue }
                throw POSIXFailure.error("Cannot write to \(path)", errno: errno)
            }
            written += result
        }
    }

    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int {
        while true {
            let result = pread(descriptor, buffer.baseAddress!, buffer.count, off_t(offset))
            if result >= 0 { return result }
            if errno != EINTR { throw POSIXFailure.error("Cannot read \(path)", errno: errno) }
        }
    }

    func allocate(size: Int64) throws {
        guard ftruncate(descriptor, off_t(size)) == 0 else {
            throw POSIXFailure.error("Cannot size \(path) to \(size) bytes", errno: errno)
        }
        #if os(Linux)
            guard size > 0 else { return }
            // Reserve the blocks now so a full disk fails before the first byte, not halfway. Filesystems
            // without fallocate keep the sparse file; a real shortage is an error.
            let result = posix_fallocate(descriptor, 0, off_t(size))
            if result == ENOSPC || result == EDQUOT {
                throw POSIXFailure.error("Cannot reserve \(size) bytes for \(path)", errno: result)
            }
        #endif
    }

    func size() throws -> Int64 {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw POSIXFailure.error("Cannot stat \(path)", errno: errno) }
        return Int64(info.st_size)
    }

    func sync() throws {
        #if os(Linux)
            let result = fdatasync(descriptor)
        #else
            let result = fsync(descriptor)
        #endif
        guard result == 0 else { throw POSIXFailure.error("Cannot flush \(path)", errno: errno) }
    }

    func close() {
        _ = closeFile(descriptor)
    }
}

private func closeFile(_ descriptor: Int32) -> Int32 {
    #if canImport(Glibc)
        return Glibc.close(descriptor)
    #elseif canImport(Musl)
        return Musl.close(descriptor)
    #else
        return Darwin.close(descriptor)
    #endif
}

/// Maps `errno` values to ``ModelDepotError``s in one place.
enum POSIXFailure {
    static func error(_ what: String, errno code: Int32) -> ModelDepotError {
        let reason = String(cString: strerror(code))
        switch code {
        case ENOSPC, EDQUOT:
            return ModelDepotError(
                .insufficientDiskSpace,
                "\(what): the disk is full (\(reason)). Free some space and run the same download again; the bytes already on disk are kept.",
                underlying: POSIXErrorCode(rawValue: code).map { POSIXError($0) }
            )
        case EACCES, EPERM, EROFS:
            return ModelDepotError(
                .fileSystem, "\(what): permission denied (\(reason)). Choose a folder you can write to.",
                underlying: POSIXErrorCode(rawValue: code).map { POSIXError($0) })
        default:
            return ModelDepotError(
                .fileSystem, "\(what): \(reason).", underlying: POSIXErrorCode(rawValue: code).map { POSIXError($0) })
        }
    }
}

/// The permissions a file created the ordinary way gets here: `0o666` less the process's umask.
enum FileCreationMode {
    /// Read once: POSIX has no call that reads the umask without setting it, so it is set to a stricter value
    /// for an instant and put back (a file another thread creates in that instant is only less readable).
    static let standard: mode_t = {
        let mask = umask(0o077)
        umask(mask)
        return 0o666 & ~mask
    }()
}
