import Foundation

/// Maps `errno` values to ``ModelDepotError``s in one place.
package enum POSIXFailure {
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
