import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Free space where a path lives: what a download may still write there.
package enum VolumeSpace {
    /// Bytes an ordinary process may still write on the volume holding `path`.
    ///
    /// - Linux: `statvfs(3)`, `f_bavail × f_frsize` (blocks available to unprivileged users).
    /// - Apple platforms: `URLResourceValues.volumeAvailableCapacityForImportantUsage`
    ///   (`NSURLVolumeAvailableCapacityForImportantUsageKey`, iOS 11 / macOS 10.13), which counts purgeable space
    ///   the system frees for an app's important work, as Apple advises for user-requested downloads; when a
    ///   volume does not report it or reports 0 (not APFS, or no user logged in), `statfs(2)`'s
    ///   `f_bavail × f_bsize`.
    package static func availableBytes(atPath path: String) throws -> Int64 {
        #if canImport(Darwin)
            let url = URL(fileURLWithPath: path)
            // The key answers 0 on volumes that are not APFS (an exFAT or HFS+ drive) and when no user is logged
            // in; 0 is then "unknown", not "full", or every pull to such a drive would fail for lack of space.
            if let values = try? url.resourceValues(forKeys: [.volumeAvailableCapacityForImportantUsageKey]),
                let important = values.volumeAvailableCapacityForImportantUsage, important > 0
            {
                return important
            }
            var info = statfs()
            guard statfs(path, &info) == 0 else {
                throw SystemCallError("Cannot read the free space of \(path)", code: errno)
            }
            return Int64(info.f_bavail) * Int64(info.f_bsize)
        #else
            var info = statvfs()
            guard statvfs(path, &info) == 0 else {
                throw SystemCallError("Cannot read the free space of \(path)", code: errno)
            }
            return Int64(info.f_bavail) * Int64(info.f_frsize)
        #endif
    }
}
