#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Sets a file's access time to now and leaves its modification time alone: `utimensat(2)` with
/// `UTIME_NOW`/`UTIME_OMIT`. Swift imports neither constant (both are macros of expressions), so their values
/// are spelled here: glibc's `<bits/stat.h>` `((1l << 30) - 1)`/`((1l << 30) - 2)`, Darwin's `<sys/stat.h>`
/// `-1`/`-2`.
package enum FileAccessTime {
    #if canImport(Darwin)
        private static let now = -1
        private static let omit = -2
    #else
        private static let now = (1 << 30) - 1
        private static let omit = (1 << 30) - 2
    #endif

    /// Marks `path` as read now (even on `noatime` mounts, where reads do not). False when it cannot.
    @discardableResult
    package static func touch(_ path: String) -> Bool {
        var times = [timespec(tv_sec: 0, tv_nsec: now), timespec(tv_sec: 0, tv_nsec: omit)]
        return utimensat(AT_FDCWD, path, &times, 0) == 0
    }
}
