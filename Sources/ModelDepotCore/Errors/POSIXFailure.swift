import Foundation

/// Maps `errno` values to ``ModelDepotError``s in one place.
package enum POSIXFailure {
    /// Reserving a file's blocks before the download failed. The free space a device reports can count space the
    /// system may reclaim (iOS's "important usage" capacity counts purgeable caches), while a reservation
    /// (FileStorage.reserve) needs blocks that are free now: say so, not just "disk full".
    package static func reservationError(_ path: String, size: Int64, errno code: Int32) -> ModelDepotError {
        guard code == ENOSPC || code == EDQUOT else {
            return error("Cannot reserve \(size) bytes for \(path)", errno: code)
        }
        return ModelDepotError(
            .insufficientDiskSpace,
            "Cannot reserve \(size) bytes for \(path): the disk does not have that much free right now. Space the system counts as available may first have to be cleared by it (caches, offloadable apps: Settings › General › Storage on iPhone and iPad); free space or delete models, then download again. The bytes already on disk are kept.",
            underlying: POSIXErrorCode(rawValue: code).map { POSIXError($0) }, remedy: .freeSpace)
    }

    package static func error(_ what: String, errno code: Int32) -> ModelDepotError {
        let reason = String(cString: strerror(code))
        switch code {
        case ENOSPC, EDQUOT:
            return ModelDepotError(
                .insufficientDiskSpace,
                "\(what): the disk is full (\(reason)). Free some space and run the same download again; the bytes already on disk are kept.",
                underlying: POSIXErrorCode(rawValue: code).map { POSIXError($0) }, remedy: .freeSpace
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
