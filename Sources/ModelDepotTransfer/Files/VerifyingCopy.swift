import Crypto
import Dispatch
import Foundation
import ModelDepotCore
import ModelDepotPlatform
import Synchronization

/// Copies a file and hashes the copy: the OS copies (in the kernel where it can, `KernelCopy`) and starts writing
/// each chunk to the disk while a second core hashes what has landed, so the digest is of the bytes placed and a
/// verified copy costs about one SHA-256 pass over the file (`bench/bundle.sh`).
package enum VerifyingCopy {
    /// Which digest to compute: SHA-256, or the git blob id (SHA-1 over `blob <size>\0` and the bytes) of a file
    /// expected to be `size` bytes long.
    package enum Digest: Sendable {
        case sha256
        case gitBlob(expectedSize: Int64)
    }

    /// Copies `source` (from `offset`, at most `length` bytes; all of it by default) to `destination` (created
    /// or truncated) and returns the digest of the bytes written and their count.
    ///
    /// `source` must be a regular file, opened without following a link, and hold at least `offset + length`
    /// bytes; with `fileSize`, exactly that many. What was checked before may have been swapped since — for a
    /// link, a FIFO (whose open would wait for a writer) or `/dev/zero` (endless) — so anything else is refused
    /// (`invalidArgument`) before a byte is copied, and no more than `length` bytes are ever read.
    package static func copy(
        from source: String, offset: Int64 = 0, length: Int64? = nil, fileSize: Int64? = nil, to destination: String,
        computing digest: Digest
    ) throws -> (digest: String, bytes: Int64) {
        let input: Int32
        switch RegularFile.open(source) {
        case .file(let descriptor, let status):
            input = descriptor
            let needed = offset.addingReportingOverflow(length ?? 0)
            if let fileSize, status.size != fileSize {
                close(input)
                throw ModelDepotError(
                    .invalidArgument, "\(source) holds \(status.size) bytes, not \(fileSize); refusing to copy it.")
            }
            if needed.overflow || status.size < needed.partialValue {
                close(input)
                throw ModelDepotError(
                    .invalidArgument, "\(source) holds \(status.size) bytes, fewer than the copy needs; refusing it.")
            }
        case .link:
            throw ModelDepotError(.invalidArgument, "\(source) is a link; only regular files are copied.")
        case .notRegular:
            throw ModelDepotError(.invalidArgument, "\(source) is not a regular file (a FIFO, device or folder).")
        case .failed(let code):
            throw POSIXFailure.error("Cannot open \(source)", errno: code)
        }
        defer { close(input) }
        guard lseek(input, off_t(offset), SEEK_SET) == off_t(offset) else {
            throw POSIXFailure.error("Cannot seek in \(source)", errno: errno)
        }
        let output = open(destination, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard output >= 0 else { throw POSIXFailure.error("Cannot create \(destination)", errno: errno) }
        defer { close(output) }
        let readBack = open(destination, O_RDONLY | O_CLOEXEC)
        guard readBack >= 0 else { throw POSIXFailure.error("Cannot open \(destination)", errno: errno) }
        defer { close(readBack) }
        let state = State(digest: digest, limit: length ?? .max)
        defer { state.release() }
        DispatchQueue.concurrentPerform(iterations: 2) { lane in
            if lane == 0 {
                state.copy(from: input, to: output, source: source)
            } else {
                state.hash(readBack, destination: destination)
            }
        }
        if let failure = state.failure.withLock({ $0 }) { throw failure }
        return (state.finalize(), state.copied.load(ordering: .acquiring))
    }

    /// What the two lanes share: the copier publishes how far it got and signals; the hasher follows.
    private final class State: @unchecked Sendable {
        static let chunk = 8 << 20
        let copyBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 4096)
        let copied = Atomic<Int64>(0)
        let finished = Atomic<Bool>(false)
        let progress = DispatchSemaphore(value: 0)
        let failure = Mutex<(any Error)?>(nil)
        var sha256 = SHA256()
        var sha1 = Insecure.SHA1()
        let isSHA256: Bool
        let limit: Int64

        init(digest: Digest, limit: Int64) {
            self.limit = limit
            switch digest {
            case .sha256:
                isSHA256 = true
            case .gitBlob(let size):
                isSHA256 = false
                sha1.update(data: Array("blob \(size)\0".utf8))
            }
        }

        func copy(from input: Int32, to output: Int32, source: String) {
            defer {
                finished.store(true, ordering: .releasing)
                progress.signal()
            }
            while true {
                let left = limit - copied.load(ordering: .relaxed)
                if left <= 0 { return }
                let moved = KernelCopy.copy(
                    from: input, to: output, count: Int(min(Int64(Self.chunk), left)), buffer: copyBuffer)
                if moved < 0 {
                    if errno == EINTR { continue }
                    let code = errno
                    failure.withLock { $0 = POSIXFailure.error("Cannot copy \(source)", errno: code) }
                    return
                }
                if moved == 0 { return }
                // The disk takes each chunk while the other lane hashes, rather than all of it at the next sync.
                KernelCopy.startWriteback(
                    descriptor: output, offset: copied.load(ordering: .relaxed), count: Int64(moved))
                copied.add(Int64(moved), ordering: .releasing)
                progress.signal()
            }
        }

        /// Hashes the copy chunk by chunk as it lands, through a mapping of the destination: the page cache's
        /// pages are hashed where they lie (reading them back into a buffer cost a fifth more).
        func hash(_ descriptor: Int32, destination: String) {
            var hashed: Int64 = 0
            while true {
                let done = finished.load(ordering: .acquiring)
                let available = copied.load(ordering: .acquiring)
                // Whole chunks only until the copy ends, so every mapping starts at a page-aligned offset.
                if available - hashed >= Int64(Self.chunk) || (done && hashed < available) {
                    let want = Int(min(Int64(Self.chunk), available - hashed))
                    guard let mapping = mmap(nil, want, PROT_READ, MAP_SHARED, descriptor, off_t(hashed)),
                        mapping != MAP_FAILED
                    else {
                        let code = errno
                        failure.withLock { $0 = POSIXFailure.error("Cannot read back \(destination)", errno: code) }
                        return
                    }
                    let bytes = UnsafeRawBufferPointer(start: mapping, count: want)
                    if isSHA256 { sha256.update(bufferPointer: bytes) } else { sha1.update(bufferPointer: bytes) }
                    munmap(mapping, want)
                    hashed += Int64(want)
                } else if done {
                    return
                } else {
                    progress.wait()
                }
            }
        }

        func finalize() -> String { isSHA256 ? sha256.finalize().hexString : sha1.finalize().hexString }

        func release() {
            copyBuffer.deallocate()
        }
    }
}
