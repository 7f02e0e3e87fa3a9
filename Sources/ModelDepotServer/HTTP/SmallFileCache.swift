import Foundation
import ModelDepotCore
import ModelDepotPlatform
import NIOCore
import Synchronization

/// The bytes of small files a mirror has served, so the next request for one is answered from memory instead of
/// opening the file on a thread pool and sending it with `sendfile` (for a 3-byte `config.json` the hops between
/// threads cost far more than the bytes; a fleet's pull is mostly such files).
///
/// Bytes are kept only for a file whose ``ServedFile/stamp`` a source vouches for on every request
/// (``FolderRepositorySource``: by `stat`, or by the kernel's change notices between checks), and given out only
/// while that stamp is unchanged. They are kept only when read ``FolderWalk/settleTime`` or more after the file last
/// changed, and when the file's stamp was the same before and after the read: a later change then always leaves
/// another status-change time, however coarse the file system's clock (the reasoning of ``FolderWalk``).
final class SmallFileCache: Sendable {
    /// Files up to this size are kept.
    static let largestFile = 64 << 10
    /// The most bytes kept; past it the cache starts again empty.
    let capacity: Int
    let wallClock: @Sendable () -> Int64
    private let entries = Mutex<(files: [String: (stamp: FileStamp, bytes: ByteBuffer)], bytes: Int)>(([:], 0))

    init(capacity: Int = 16 << 20, wallClock: @escaping @Sendable () -> Int64 = FolderRepositorySource.now) {
        self.capacity = capacity
        self.wallClock = wallClock
    }

    /// The file's bytes from memory, or read now (off the cooperative pool) and kept when they may be; nil when
    /// the file is not one to keep (no stamp, too large) or no longer what its stamp says.
    func bytes(of file: ServedFile) async -> ByteBuffer? {
        guard let stamp = file.stamp, file.size <= Self.largestFile else { return nil }
        if let known = entries.withLock({ $0.files[file.diskPath] }), known.stamp == stamp { return known.bytes }
        let started = wallClock()
        guard let read = try? await BlockingWork.run({ Self.read(file.diskPath, stamp: stamp) }) else { return nil }
        if stamp.latestChange < started - FolderWalk.settleTime {
            entries.withLock { entries in
                if entries.bytes + read.readableBytes > capacity { entries = ([:], 0) }
                entries.bytes += read.readableBytes - (entries.files[file.diskPath]?.bytes.readableBytes ?? 0)
                entries.files[file.diskPath] = (stamp, read)
            }
        }
        return read
    }

    /// The file's bytes when it is the file `stamp` describes before and after reading it (a link is not followed).
    private static func read(_ path: String, stamp: FileStamp) -> ByteBuffer? {
        guard case .file(let descriptor, let before) = RegularFile.open(path) else { return nil }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        guard FileStamp(before) == stamp,
            let data = try? handle.read(upToCount: Int(stamp.size) + 1) ?? Data(), data.count == stamp.size,
            let after = FileStatus(descriptor: descriptor), FileStamp(after) == stamp
        else { return nil }
        return ByteBuffer(bytes: data)
    }
}
