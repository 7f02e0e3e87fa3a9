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
    ///   and all at once first (`F_ALLOCATECONTIG | F_ALLOCATEALL`), else all at once anywhere
    ///   (`F_ALLOCATEALL`), for what lies past the physical end of file (`F_PEOFPOSMODE`); `fst_bytesalloc`
    ///   short of the request is a full volume. Never compiled here (no Apple SDK on the build machine).
    package static func reserve(descriptor: Int32, size: Int64) -> Int32 {
        guard size > 0 else { return 0 }
        #if os(Linux)
            let result = posix_fallocate(descriptor, 0, off_t(size))
            return result == ENOSPC || result == EDQUOT ? result : 0
        #elseif canImport(Darwin)
            // F_PEOFPOSMODE counts fst_length from the physical end of file, so only what the file does not
            // hold yet is asked for (a resumed file already has blocks); `st_blocks` is in 512-byte units
            // (`<sys/stat.h>`).
            var info = stat()
            let allocated = fstat(descriptor, &info) == 0 ? Int64(info.st_blocks) * 512 : 0
            let needed = size - allocated
            guard needed > 0 else { return 0 }
            // Contiguous and all-or-nothing first, then all-or-nothing anywhere (`<sys/fcntl.h>`: F_ALLOCATECONTIG,
            // F_ALLOCATEALL).
            var store = fstore_t(
                fst_flags: UInt32(F_ALLOCATECONTIG | F_ALLOCATEALL), fst_posmode: F_PEOFPOSMODE, fst_offset: 0,
                fst_length: off_t(needed), fst_bytesalloc: 0)
            var result = fcntl(descriptor, F_PREALLOCATE, &store)
            if result == -1 {
                store.fst_flags = UInt32(F_ALLOCATEALL)
                store.fst_bytesalloc = 0
                result = fcntl(descriptor, F_PREALLOCATE, &store)
            }
            guard result != -1 else {
                let code = errno
                // Volumes that cannot preallocate (exFAT, SMB, NFS answer ENOTSUP) download without a
                // reservation; any other failure (EINVAL included) is reported, not taken for success.
                return code == ENOTSUP || code == EOPNOTSUPP ? 0 : code
            }
            // The kernel says how much it allocated: less than asked is a volume that is full.
            return Int64(store.fst_bytesalloc) < needed ? ENOSPC : 0
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
