#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// What `stat(2)` says of a path, read the same way on Linux and Apple platforms: glibc names the times
/// `st_mtim`/`st_atim`, Darwin's `<sys/stat.h>` `st_mtimespec`/`st_atimespec` (both `struct timespec`).
package struct FileStatus: Sendable, Equatable {
    package enum Kind: Sendable, Equatable { case file, folder, link, other }

    package let kind: Kind
    package let size: Int64
    package let inode: UInt64
    /// The file system it is on (`st_dev`): with the inode, what names one file or folder.
    package let device: UInt64
    /// Nanoseconds since 1970.
    package let modifiedNanoseconds: Int64
    package let accessedNanoseconds: Int64
    /// When the file's status last changed (`st_ctime`), nanoseconds since 1970: any write, rename, link or
    /// permission change sets it to now, and unlike the modification time nobody can set it back.
    package let changedNanoseconds: Int64

    /// The status of `path`; with `followingLinks: false` a link's own (`lstat`). Nil when it does not exist.
    package init?(path: String, followingLinks: Bool = true) {
        var info = stat()
        guard (followingLinks ? stat(path, &info) : lstat(path, &info)) == 0 else { return nil }
        self.init(info)
    }

    /// The status of an open file (`fstat`).
    package init?(descriptor: Int32) {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return nil }
        self.init(info)
    }

    private init(_ info: stat) {
        switch info.st_mode & S_IFMT {
        case S_IFREG: kind = .file
        case S_IFDIR: kind = .folder
        case S_IFLNK: kind = .link
        default: kind = .other
        }
        size = Int64(info.st_size)
        inode = UInt64(info.st_ino)
        device = UInt64(info.st_dev)
        #if canImport(Darwin)
            modifiedNanoseconds = Self.nanoseconds(info.st_mtimespec)
            accessedNanoseconds = Self.nanoseconds(info.st_atimespec)
            changedNanoseconds = Self.nanoseconds(info.st_ctimespec)
        #else
            modifiedNanoseconds = Self.nanoseconds(info.st_mtim)
            accessedNanoseconds = Self.nanoseconds(info.st_atim)
            changedNanoseconds = Self.nanoseconds(info.st_ctim)
        #endif
    }

    private static func nanoseconds(_ time: timespec) -> Int64 {
        Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }

    /// Seconds since 1970, as Python's `os.stat().st_mtime` gives them.
    package var modified: Double { Double(modifiedNanoseconds) / 1e9 }
    package var accessed: Double { Double(accessedNanoseconds) / 1e9 }
}
