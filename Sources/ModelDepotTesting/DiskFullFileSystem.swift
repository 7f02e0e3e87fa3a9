import Foundation
import ModelDepotCore
import ModelDepotTransfer
import Synchronization

/// A ``DownloadFileSystem`` over the real disk that pretends the volume is small: it reports
/// `availableSpace` and fails writes with the same error a real `ENOSPC` produces once more than
/// `writableBytes` have been written through it.
package final class DiskFullFileSystem: DownloadFileSystem {
    private let reportedSpace: Int64
    private let written = Mutex<Int64>(0)
    let writableBytes: Int64

    package init(availableSpace: Int64 = .max, writableBytes: Int64 = .max) {
        self.reportedSpace = availableSpace
        self.writableBytes = writableBytes
    }

    package func availableSpace(forPath path: String) throws -> Int64 { reportedSpace }

    package func openPartialFile(atPath path: String) throws -> any PartialFile {
        LimitedFile(base: try LocalFileSystem().openPartialFile(atPath: path), owner: self)
    }

    /// Reserves `count` bytes of the budget; false once it is used up.
    func reserve(_ count: Int) -> Bool {
        written.withLock { total in
            guard total + Int64(count) <= writableBytes else { return false }
            total += Int64(count)
            return true
        }
    }
}

private struct LimitedFile: PartialFile {
    let base: any PartialFile
    let owner: DiskFullFileSystem

    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws {
        guard owner.reserve(bytes.count) else {
            throw ModelDepotError(
                .insufficientDiskSpace, "Cannot write to the partial file: the disk is full (No space left on device).")
        }
        try base.write(bytes, at: offset)
    }

    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int {
        try base.read(into: buffer, at: offset)
    }

    // Allocation reserves blocks on a real disk; here the budget is about writes, so it passes through.
    func allocate(size: Int64) throws { try base.allocate(size: size) }
    func size() throws -> Int64 { try base.size() }
    func sync() throws { try base.sync() }
    func close() { base.close() }
}
