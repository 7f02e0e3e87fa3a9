import Foundation
import ModelDepotCore

/// Random access to a file's bytes, so a pickle is judged by one code path whether the file is on disk or is probed
/// over HTTP with ranged requests (``ProbedBytes``).
package protocol ByteSource {
    /// The file's size in bytes.
    var size: Int64 { get }
    /// `count` bytes at `offset`, fewer only at the end of the file.
    func read(at offset: Int64, count: Int) throws -> [UInt8]
}

/// A file open for reading.
package struct FileBytes: ByteSource {
    let handle: FileHandle
    package let size: Int64

    package init(handle: FileHandle) throws {
        self.handle = handle
        self.size = Int64(try handle.seekToEnd())
    }

    package func read(at offset: Int64, count: Int) throws -> [UInt8] {
        try handle.seek(toOffset: UInt64(max(offset, 0)))
        return [UInt8](try handle.read(upToCount: count) ?? Data())
    }
}

/// Pieces of a remote file fetched so far; a read outside them throws ``Missing`` naming the range to fetch, and the
/// prober fetches it and asks again.
package struct ProbedBytes: ByteSource {
    /// The range a read needs that has not been fetched.
    package struct Missing: Error {
        package var offset: Int64
        package var count: Int
    }

    package let size: Int64
    package private(set) var pieces: [(offset: Int64, bytes: [UInt8])] = []

    package init(size: Int64) { self.size = size }

    package mutating func add(_ bytes: [UInt8], at offset: Int64) { pieces.append((offset, bytes)) }

    package func read(at offset: Int64, count: Int) throws -> [UInt8] {
        let end = min(offset + Int64(count), size)
        guard offset < end else { return [] }
        for piece in pieces where piece.offset <= offset && piece.offset + Int64(piece.bytes.count) >= end {
            let start = Int(offset - piece.offset)
            return Array(piece.bytes[start..<start + Int(end - offset)])
        }
        throw Missing(offset: offset, count: Int(end - offset))
    }
}
