import NIOCore
import NIOPosix

/// Opens a file at rest off the event loop and stages it with the connection's ``FileRegionHandler``.
enum FileRegionStaging {
    /// The token to put in the response's marker field, or nil when the file cannot go by `sendfile` (no handler
    /// on this connection, the file cannot be opened, or it is no longer `size` bytes): the caller streams it.
    static func stage(path: String, range: Range<Int>, size: Int, on channel: any Channel) async -> UInt64? {
        let opened = NonBlockingFileIO(threadPool: .singleton).openFile(
            _deprecatedPath: path, eventLoop: channel.eventLoop)
        let staged = opened.flatMapThrowing { handle, region -> UInt64? in
            guard region.endIndex == size,
                let handler = try? channel.pipeline.syncOperations.handler(type: FileRegionHandler.self)
            else {
                try? handle.close()
                return nil
            }
            return handler.stage(.init(handle: handle, range: range))
        }
        return try? await staged.get()
    }
}
