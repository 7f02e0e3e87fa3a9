import Foundation
import ModelDepotCore
import ModelDepotPlatform

/// The real disk, through POSIX calls: `pwrite`/`pread` at offsets; reserving blocks, flushing and free space
/// through the platform layer (`FileStorage`, `VolumeSpace`).
package struct LocalFileSystem: DownloadFileSystem {
    /// The local disk.
    package init() {}

    /// Bytes free for this process on the volume holding `path` (on Apple platforms, for important usage).
    package func availableSpace(forPath path: String) throws -> Int64 {
        do {
            return try VolumeSpace.availableBytes(atPath: path)
        } catch let failure as SystemCallError {
            throw POSIXFailure.error(failure.operation, errno: failure.code)
        }
    }

    /// Partial files are the owner's alone until they are verified and renamed into place, where they get the
    /// permissions a new file gets (`0o666` less the umask).
    package func openPartialFile(atPath path: String) throws -> any PartialFile {
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
        // Reserve the blocks now so a full disk fails before the first byte, not halfway.
        let shortage = FileStorage.reserve(descriptor: descriptor, size: size)
        if shortage != 0 { throw POSIXFailure.reservationError(path, size: size, errno: shortage) }
    }

    func size() throws -> Int64 {
        guard let status = FileStatus(descriptor: descriptor) else {
            throw POSIXFailure.error("Cannot stat \(path)", errno: errno)
        }
        return status.size
    }

    func sync() throws {
        let failure = FileStorage.syncData(descriptor: descriptor)
        guard failure == 0 else { throw POSIXFailure.error("Cannot flush \(path)", errno: failure) }
    }

    func close() {
        FileStorage.close(descriptor: descriptor)
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
