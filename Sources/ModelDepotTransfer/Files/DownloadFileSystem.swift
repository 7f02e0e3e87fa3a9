/// The engine's seam to the disk: free space and the partial file. ``LocalFileSystem`` is the real one;
/// tests substitute one that reports a full disk or fails writes with `ENOSPC`.
package protocol DownloadFileSystem: Sendable {
    /// Bytes available to this user on the volume holding `path` (a folder that exists).
    func availableSpace(forPath path: String) throws -> Int64
    /// Opens (creating if needed) the file at `path` for reading and writing at offsets.
    func openPartialFile(atPath path: String) throws -> any PartialFile
}

/// A file written at offsets by several connections at once.
package protocol PartialFile: Sendable {
    /// Writes all of `bytes` at `offset`. Throws `ModelDepotError` (`insufficientDiskSpace` on `ENOSPC`).
    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws
    /// Reads up to `buffer.count` bytes at `offset`; returns how many were read (0 at the end).
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int
    /// Reserves `size` bytes on disk (so a full disk shows up now, not halfway) and sets the file's length.
    func allocate(size: Int64) throws
    /// The file's current length.
    func size() throws -> Int64
    /// Flushes written data to stable storage.
    func sync() throws
    func close()
}
