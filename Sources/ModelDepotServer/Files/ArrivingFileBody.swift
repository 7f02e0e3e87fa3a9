import Foundation
import Hummingbird
import NIOCore
import Synchronization

/// A response body that follows a ``BlobPull``: it sends each byte of the range as soon as the pull releases
/// it, and drops the connection short of the full length when the pull fails.
enum ArrivingFileBody {
    static let chunkSize = 1 << 20

    /// - Parameter sent: told of every chunk written to the client (for the bytes-served metric).
    /// - Parameter closed: the connection's close future. A body waiting for bytes far ahead (`Range: bytes=-1`
    ///   waits for the verdict on the whole file) writes nothing for as long, so only the connection closing tells
    ///   that its client hung up: then it stops following the pull at once.
    static func make(
        _ pull: BlobPull, range: Range<Int64>, closed: EventLoopFuture<Void>? = nil,
        sent: @escaping @Sendable (Int) -> Void
    ) -> ResponseBody {
        ResponseBody { writer in
            // Followed while this body is written: when every follower is gone, an unfinished pull may be cancelled.
            let following = Following(pull)
            closed?.whenComplete { _ in following.stop() }
            defer { following.stop() }
            var reader: ArrivingFileReader? = nil
            defer { reader?.close() }
            var offset = range.lowerBound
            while offset < range.upperBound {
                guard let end = await pull.releasable(from: offset) else {
                    // Throwing mid-body makes the server drop the connection: the client sees it cut short. A
                    // response the server's stop cancelled did not see the pull fail.
                    try Task.checkCancellation()
                    throw PullFailed(etag: pull.etag, outcome: pull.outcome)
                }
                if reader == nil { reader = try ArrivingFileReader(pull) }
                while offset < min(end, range.upperBound) {
                    let count = Int(min(Int64(chunkSize), min(end, range.upperBound) - offset))
                    let source = reader!
                    let at = offset
                    // Off the cooperative pool: a read can block on the disk, and the pool has a thread per core.
                    let buffer = try await pull.reads.run { try source.read(count: count, at: at) }
                    try await writer.write(buffer)
                    sent(count)
                    offset += Int64(count)
                }
            }
            try await writer.finish(nil)
        }
    }
}

/// One response's place among a pull's followers, given up once (the body ended, or its connection closed first).
private final class Following: Sendable {
    private let pull: BlobPull
    private let active = Mutex(true)

    init(_ pull: BlobPull) {
        self.pull = pull
        pull.followed(true)
    }

    func stop() {
        let was = active.withLock { active in
            defer { active = false }
            return active
        }
        if was { pull.followed(false) }
    }
}

/// The descriptor a following response reads through: the partial file while the pull runs. Opened once, so
/// the rename into the blob (same inode) does not disturb it; when the rename came first, the blob is opened.
struct ArrivingFileReader {
    private let descriptor: Int32

    init(_ pull: BlobPull) throws {
        var descriptor = open(pull.partialPath, O_RDONLY | O_CLOEXEC)
        if descriptor < 0 { descriptor = open(pull.blobPath, O_RDONLY | O_CLOEXEC) }
        guard descriptor >= 0 else { throw PullFailed(etag: pull.etag, outcome: .failed("the file vanished")) }
        self.descriptor = descriptor
    }

    func read(count: Int, at offset: Int64) throws -> ByteBuffer {
        var buffer = ByteBufferAllocator().buffer(capacity: count)
        let read = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { bytes in
            max(0, pread(descriptor, bytes.baseAddress, count, off_t(offset)))
        }
        guard read == count else {
            throw PullFailed(etag: "", outcome: .failed("short read at byte \(offset)"))
        }
        return buffer
    }

    func close() { _ = Foundation.close(descriptor) }
}

struct PullFailed: Error, CustomStringConvertible {
    let etag: String
    let outcome: BlobPull.Outcome?
    var description: String {
        if case .failed(let reason) = outcome { return "the pull of \(etag) failed: \(reason)" }
        return "the pull of \(etag) failed"
    }
}
