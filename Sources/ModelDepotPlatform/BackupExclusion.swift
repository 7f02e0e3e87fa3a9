import Foundation

/// Keeps re-downloadable data out of device backups.
package enum BackupExclusion {
    /// Marks `folder` as excluded from backups. On Apple platforms this sets
    /// `URLResourceValues.isExcludedFromBackup` (`NSURLIsExcludedFromBackupKey`), as Apple's data storage
    /// guidelines ask of files an app can download again; elsewhere backup tools read the folder's
    /// `CACHEDIR.TAG` instead, and this does nothing. Failures are ignored: a backed-up cache still works.
    package static func exclude(_ folder: URL) {
        #if canImport(Darwin)
            var values = URLResourceValues()
            values.isExcludedFromBackup = true
            var url = folder
            try? url.setResourceValues(values)
        #endif
    }
}
