#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reserving and flushing a file's blocks: the calls differ per platform, the promises do not.
package enum FileStorage {
    /// Reserves the blocks of the first `size` bytes of the open file, so a full disk fails now rather than
    /// halfway through a download. The file's length is set by the caller (`ftruncate`). Returns 0, or the
    /// `errno` of a real shortage (`ENOSPC`, `EDQUOT`); file systems that cannot reserve keep a sparse file
    /// and report 0. Check the free space first (the engine does): on ext4 a request larger than the free space
    /// takes blocks until it fails, filling the disk for everyone meanwhile.
    ///
    /// - Linux: `posix_fallocate(3)`.
    /// - Apple platforms: `fcntl(2)` with `F_PREALLOCATE` and an `fstore_t` (`<sys/fcntl.h>`): contiguous
    ///   first (`F_ALLOCATECONTIG`), else anywhere (`F_ALLOCATEALL`), from the physical end of file
    ///   (`F_PEOFPOSMODE`).
    package static func reserve(descriptor: Int32, size: Int64) -> Int32 {
        guard size > 0 else { return 0 }
        #if os(Linux)
            let result = posix_fallocate(descriptor, 0, off_t(size))
            return result == ENOSPC || result == EDQUOT ? result : 0
        #elseif canImport(Darwin)
            var store = fstore_t(
                fst_flags: UInt32(F_ALLOCATECONTIG), fst_posmode: F_PEOFPOSMODE, fst_offset: 0,
                fst_length: off_t(size), fst_bytesalloc: 0)
            if fcntl(descriptor, F_PREALLOCATE, &store) == -1 {
                store.fst_flags = UInt32(F_ALLOCATEALL)
                if fcntl(descriptor, F_PREALLOCATE, &store) == -1 {
                    let code = errno
                    return code == ENOSPC || code == EDQUOT ? code : 0
                }
            }
            return 0
        #else
            return 0
        #endif
    }

    /// Flushes the file's data to stable storage. Returns 0 or the `errno`.
    ///
    /// - Linux: `fdatasync(2)` (data and the metadata needed to read it back).
    /// - Apple platforms: `fcntl(2)` with `F_FULLFSYNC`, since Darwin's `fsync` does not flush the drive's own
    ///   cache (Apple's `fsync(2)` man page); `fsync` when the file system does not support it.
    package static func syncData(descriptor: Int32) -> Int32 {
        #if os(Linux)
            return fdatasync(descriptor) == 0 ? 0 : errno
        #elseif canImport(Darwin)
            if fcntl(descriptor, F_FULLFSYNC) == 0 { return 0 }
            return fsync(descriptor) == 0 ? 0 : errno
        #else
            return fsync(descriptor) == 0 ? 0 : errno
        #endif
    }

    /// `close(2)`, for types that have a `close()` method of their own.
    @discardableResult
    package static func close(descriptor: Int32) -> Int32 {
        #if canImport(Glibc)
            return Glibc.close(descriptor)
        #elseif canImport(Musl)
            return Musl.close(descriptor)
        #else
            return Darwin.close(descriptor)
        #endif
    }
}
