import Crypto
import Foundation
import ModelDepotCore

/// SHA-256 of a file that is being written out of order: it hashes the bytes from offset 0 as far as they
/// are contiguous, reading them back from the partial file (the page cache, in practice).
///
/// Used by one task at a time (unchecked `Sendable`: the engine hands it to a ``BlockingWorkQueue`` and
/// waits for each step before the next). A resumed download re-reads what earlier runs wrote: a SHA-256 state cannot
/// be saved across processes, so that read happens once, concurrently with the download of the rest.
final class PrefixHasher: @unchecked Sendable {
    private var sha = SHA256()
    private(set) var offset: Int64 = 0
    private let buffer: UnsafeMutableRawBufferPointer

    /// - Parameter bufferSize: small enough to stay in the CPU's cache between the read and the hash (a
    ///   4 MiB buffer made each byte travel to memory and back; 256 KiB cut the read-back's system time).
    /// - Parameter start: the offset the hashed bytes start at (0: the whole file).
    init(bufferSize: Int = 256 << 10, startingAt start: Int64 = 0) {
        buffer = .allocate(byteCount: bufferSize, alignment: 64)
        offset = start
    }

    deinit { buffer.deallocate() }

    /// Hashes `file` from the current offset up to `end`, taking the bytes `window` holds from memory and reading
    /// back only the rest.
    func catchUp(to end: Int64, in file: any PartialFile, window: HashWindow) throws {
        while offset < end {
            if let piece = window.take(at: offset) {
                // A piece ends where its write ended, which is at or below the written prefix `end`.
                piece.chunk.withUnsafeBytes { update(UnsafeRawBufferPointer(rebasing: $0[0..<piece.count])) }
                continue
            }
            let from = offset
            let stop = min(end, window.advance(to: offset) ?? end)
            try catchUp(to: stop, in: file)
            window.advance(to: offset, readBackFrom: from)
        }
    }

    /// Hashes `file` from the current offset up to `end`.
    func catchUp(to end: Int64, in file: any PartialFile) throws {
        while offset < end {
            let wanted = Int(min(Int64(buffer.count), end - offset))
            let chunk = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<wanted])
            let count = try file.read(into: chunk, at: offset)
            guard count > 0 else {
                throw ModelDepotError(
                    .fileSystem,
                    "The partial file ended at byte \(offset) while \(end) were expected; it was changed by something else. Run the download again."
                )
            }
            sha.update(bufferPointer: UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            offset += Int64(count)
        }
    }

    /// Hashes bytes that arrive in order (the single-stream path), without reading them back.
    func update(_ bytes: UnsafeRawBufferPointer) {
        sha.update(bufferPointer: bytes)
        offset += Int64(bytes.count)
    }

    func finalize() -> String {
        sha.finalize().hexString
    }

    /// The SHA-256 of the whole file at `path`: its one piece.
    static func hashFile(atPath path: String) throws -> String {
        try hashPieces(atPath: path, pieceSize: .max).first ?? emptyDigest
    }

    /// The SHA-256 of each consecutive `pieceSize` bytes of the file at `path` (the last piece may be shorter; an
    /// empty file has none), in one pass.
    static func hashPieces(atPath path: String, pieceSize: Int64) throws -> [String] {
        precondition(pieceSize > 0)
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw POSIXFailure.error("Cannot open \(path)", errno: errno) }
        let file = LocalPartialFile(descriptor: descriptor, path: path)
        defer { file.close() }
        let size = try file.size()
        var digests: [String] = []
        var start: Int64 = 0
        while start < size {
            let hasher = PrefixHasher(startingAt: start)
            start += min(pieceSize, size - start)
            try hasher.catchUp(to: start, in: file)
            digests.append(hasher.finalize())
        }
        return digests
    }
}

extension PrefixHasher {
    /// SHA-256 of zero bytes.
    static let emptyDigest = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
}
