import Foundation
import ModelDepotCore

/// Sequential little-endian reads from a file through a small buffer, with bounds that turn a truncated or
/// lying file into an error instead of a crash or a huge allocation.
struct BinaryFileReader {
    struct Truncated: Error {
        let offset: Int64
    }

    private let handle: FileHandle
    let fileSize: Int64
    private var buffer: [UInt8] = []
    private var bufferStart: Int64 = 0
    private var index = 0
    private let chunk = 1 << 20

    init(path: String) throws {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw ModelDepotError(.fileSystem, "Cannot open \(path) to read its header.")
        }
        self.handle = handle
        self.fileSize = Int64((try? handle.seekToEnd()) ?? 0)
        try handle.seek(toOffset: 0)
    }

    func close() { try? handle.close() }

    /// The absolute offset of the next byte.
    var offset: Int64 { bufferStart + Int64(index) }

    mutating func bytes(_ count: Int) throws -> ArraySlice<UInt8> {
        // Compared without adding to the offset: a lying count must not overflow.
        guard count >= 0, Int64(count) <= fileSize - offset else { throw Truncated(offset: offset) }
        if index + count > buffer.count {
            let kept = Array(buffer[index...])
            bufferStart += Int64(index)
            let want = max(count - kept.count, chunk)
            let more = (try handle.read(upToCount: want)).map(Array.init) ?? []
            buffer = kept + more
            index = 0
            guard count <= buffer.count else { throw Truncated(offset: offset) }
        }
        defer { index += count }
        return buffer[index..<(index + count)]
    }

    mutating func skip(_ count: Int64) throws {
        guard count >= 0, count <= fileSize - offset else { throw Truncated(offset: offset) }
        let inBuffer = Int64(buffer.count - index)
        if count <= inBuffer {
            index += Int(count)
        } else {
            let target = offset + count
            try handle.seek(toOffset: UInt64(target))
            buffer = []
            index = 0
            bufferStart = target
        }
    }

    mutating func integer<T: FixedWidthInteger>(_ type: T.Type) throws -> T {
        let raw = try bytes(MemoryLayout<T>.size)
        var value: T = 0
        for (shift, byte) in raw.enumerated() { value |= T(truncatingIfNeeded: byte) << (shift * 8) }
        return value
    }
}
