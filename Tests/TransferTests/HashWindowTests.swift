import Foundation
import ModelDepotCore
import Testing

@testable import ModelDepotTransfer

#if MODELDEPOT_SERVER_STACK
    import NIOCore
#endif

/// The hasher of a parallel download takes the bytes written just past its position from memory and reads the rest
/// back from the partial file. Whatever was held or not, in whatever order the writes came, the digest is the file's,
/// every byte is hashed once, and the memory held never exceeds the window.
@Suite struct HashWindowTests {
    /// A partial file in memory: what was written, and how many bytes were read back.
    final class MemoryFile: PartialFile, @unchecked Sendable {
        var bytes: [UInt8]
        var readBack = 0
        init(size: Int) { bytes = [UInt8](repeating: 0, count: size) }
        func write(_ data: UnsafeRawBufferPointer, at offset: Int64) throws {
            bytes.replaceSubrange(Int(offset)..<(Int(offset) + data.count), with: data)
        }
        func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int {
            let count = min(buffer.count, bytes.count - Int(offset))
            bytes.withUnsafeBytes { source in
                buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[Int(offset)..<(Int(offset) + count)]))
            }
            readBack += count
            return count
        }
        func allocate(size: Int64) throws {}
        func size() throws -> Int64 { Int64(bytes.count) }
        func sync() throws {}
        func close() {}
    }

    static func content(_ size: Int, seed: UInt64) -> [UInt8] {
        var generator = SplitMix64(seed: seed)
        return (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    @Test(arguments: [0, 3000, 20_000, 1 << 20])
    func anyWindowGivesTheFilesDigest(capacity: Int) throws {
        let size = 200_000
        let source = Self.content(size, seed: UInt64(capacity) + 1)
        let whole = PrefixHasher(bufferSize: 0)
        source.withUnsafeBytes { whole.update($0) }
        let expected = whole.finalize()
        for round in 0..<20 {
            var generator = SplitMix64(seed: UInt64(round))
            // Four "connections" on ranges of 50,000 bytes, writing chunks of up to 7,000 in an interleaved order,
            // the hasher catching up to the written prefix now and then.
            var cursors = [0, 50_000, 100_000, 150_000]
            let ends = [50_000, 100_000, 150_000, 200_000]
            let file = MemoryFile(size: size)
            let window = HashWindow(capacity: Int64(capacity))
            let hasher = PrefixHasher(bufferSize: 4096)
            var written = [Bool](repeating: false, count: size)
            var held = 0
            while cursors != ends {
                let connection = Int.random(in: 0..<4, using: &generator)
                guard cursors[connection] < ends[connection] else { continue }
                let start = cursors[connection]
                let count = min(Int.random(in: 1...7000, using: &generator), ends[connection] - start)
                let chunk = BodyChunk(Array(source[start..<(start + count)]))
                try chunk.withUnsafeBytes { try file.write($0, at: Int64(start)) }
                window.offer(chunk, count: count, at: Int64(start))
                held = max(held, window.heldBytes)
                for index in start..<(start + count) { written[index] = true }
                cursors[connection] += count
                if Int.random(in: 0..<5, using: &generator) == 0 {
                    let prefix = Int64(written.firstIndex(of: false) ?? size)
                    try hasher.catchUp(to: prefix, in: file, window: window)
                }
            }
            try hasher.catchUp(to: Int64(size), in: file, window: window)
            #expect(hasher.offset == Int64(size))
            #expect(hasher.finalize() == expected, "capacity \(capacity), round \(round)")
            let (fromMemory, readBack) = window.sources
            #expect(fromMemory + readBack == Int64(size), "a byte hashed twice or never")
            #expect(Int64(file.readBack) == readBack)
            #expect(held <= capacity, "held \(held) bytes in a window of \(capacity)")
            #expect(window.heldBytes == 0, "bytes left held after the end")
            if capacity == 0 { #expect(fromMemory == 0) }
            if capacity >= size { #expect(readBack == 0, "the whole file fit, yet \(readBack) bytes were read back") }
        }
    }

    @Test func aChunkBehindTheHasherOrTooFarAheadIsNotHeld() {
        let window = HashWindow(capacity: 100)
        window.offer(BodyChunk([UInt8](repeating: 1, count: 50)), count: 50, at: 60)
        #expect(window.heldBytes == 0, "ends past the window")
        window.offer(BodyChunk([UInt8](repeating: 1, count: 50)), count: 40, at: 60)
        #expect(window.heldBytes == 50, "the memory the chunk keeps alive counts, not only the bytes written")
        window.advance(to: 70)
        #expect(window.heldBytes == 0, "a piece the hasher passed is dropped")
        window.offer(BodyChunk([UInt8](repeating: 1, count: 10)), count: 10, at: 65)
        #expect(window.heldBytes == 0, "behind the hasher")
        window.offer(BodyChunk([UInt8](repeating: 1, count: 10)), count: 10, at: 160)
        #expect(window.heldBytes == 10, "within the window that moved with the hasher")
    }

    /// Small reads into large transport buffers: what is held is bounded by the memory kept alive, not by the
    /// bytes written.
    @Test func smallReadsIntoLargeBuffersDoNotHoldMoreThanTheWindow() {
        let window = HashWindow(capacity: 100)
        let large = [UInt8](repeating: 7, count: 80)
        window.offer(BodyChunk(large), count: 10, at: 0)
        window.offer(BodyChunk(large), count: 10, at: 10)
        #expect(window.heldBytes == 80, "the second buffer would keep 160 bytes alive in a window of 100")
        #if MODELDEPOT_SERVER_STACK
            var buffer = ByteBufferAllocator().buffer(capacity: 4096)
            buffer.writeBytes([1, 2, 3])
            let other = HashWindow(capacity: 1024)
            other.offer(BodyChunk(buffer), count: 3, at: 0)
            #expect(other.heldBytes == 0, "three bytes in a 4 KiB buffer are not held in a 1 KiB window")
            // Slices of one read share its buffer, which counts once, until the last of them is taken.
            var read = ByteBufferAllocator().buffer(capacity: 600)
            read.writeBytes([UInt8](repeating: 9, count: 600))
            let size = read.storageCapacity
            let shared = HashWindow(capacity: Int64(2 * size))
            shared.offer(BodyChunk(read.getSlice(at: 0, length: 300)!), count: 300, at: 0)
            shared.offer(BodyChunk(read.getSlice(at: 300, length: 300)!), count: 300, at: 300)
            #expect(shared.heldBytes == size, "two slices of one buffer keep one buffer alive")
            #expect(shared.take(at: 0) != nil)
            #expect(shared.heldBytes == size, "the second slice still keeps the buffer")
            #expect(shared.take(at: 300) != nil)
            #expect(shared.heldBytes == 0)
        #endif
    }
}
