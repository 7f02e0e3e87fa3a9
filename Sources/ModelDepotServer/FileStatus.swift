#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What the mirror needs of `stat(2)`, read the same way on Linux and Apple platforms.
struct FileStatus {
    let info: stat

    /// `stat` of `path`, following links; nil when it does not exist.
    init?(_ path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        self.info = info
    }

    var isFolder: Bool { (info.st_mode & S_IFMT) == S_IFDIR }
    var isRegularFile: Bool { (info.st_mode & S_IFMT) == S_IFREG }
    var size: Int64 { Int64(info.st_size) }
    var inode: UInt64 { UInt64(info.st_ino) }

    /// The modification time in nanoseconds since 1970: `st_mtim` in glibc, `st_mtimespec` in Darwin's
    /// `<sys/stat.h>`.
    var modifiedNanoseconds: Int64 {
        #if canImport(Darwin)
            let time = info.st_mtimespec
        #else
            let time = info.st_mtim
        #endif
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }
}
