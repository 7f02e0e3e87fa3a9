import Foundation
import ModelDepotCore
import NIOCore

extension DownloadRun {
    /// Downloads from a server that ignores `Range` (or sends no length): one connection, bytes written in
    /// order from offset 0 and hashed as they arrive. Such a download cannot resume, so a failure restarts it
    /// from zero (within the retry policy) and no sidecar is kept.
    func runSingleStream(first: TransportResponse, file: any PartialFile) async throws {
        var pending: TransportResponse? = first
        try await withRetries(progressMade: { false }) {
            let response: TransportResponse
            if let first = pending {
                response = first
                pending = nil
            } else {
                response = try await withStallWatchdog { _ in try await self.send(range: nil, ifRange: nil) }
                guard response.status == 200 else { throw statusError(response) }
            }
            try await receiveWhole(response, file: file)
        }
    }

    private func receiveWhole(_ response: TransportResponse, file: any PartialFile) async throws {
        let total = response.header("Content-Length").flatMap { Int64($0.trimmingCharacters(in: .whitespaces)) }
        if let total {
            try checkExpectedSize(total)
            try checkDiskSpace(needed: total)
        }
        try file.allocate(size: 0)
        state.withLock { state in
            state.total = total
            state.bytesCompleted = 0
            state.phase = .downloading
            state.activeConnections = 1
        }
        emit(force: true)
        let (offset, digest) = try await withStallWatchdog { counter in
            let hasher = PrefixHasher(bufferSize: 0)
            var offset: Int64 = 0
            for try await buffer in response.body {
                let count = buffer.readableBytes
                if let total, offset + Int64(count) > total {
                    throw ModelDepotError(
                        .protocolViolation, "\(self.request.url) sent more bytes than its Content-Length of \(total).")
                }
                try buffer.withUnsafeReadableBytes { bytes in
                    try file.write(bytes, at: offset)
                    hasher.update(bytes)
                }
                offset += Int64(count)
                counter.add(count)
                self.recordStreamedBytes(count)
            }
            return (offset, hasher.finalize())
        }
        state.withLock { $0.activeConnections = 0 }
        if let total, offset < total {
            throw ModelDepotError(
                .network,
                "The connection to \(request.url.host ?? "the server") closed after \(offset) of \(total) bytes.")
        }
        try checkExpectedSize(offset)
        state.withLock { state in
            state.total = offset
            state.sha256 = digest
        }
    }

    private func recordStreamedBytes(_ count: Int) {
        let now = clock.elapsed()
        state.withLock { state in
            state.bytesReceived += Int64(count)
            state.bytesCompleted += Int64(count)
            emitLocked(&state, now: now, force: false)
        }
    }
}
