import Foundation
import ModelDepotCore

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
        try flow.withLock { try $0.streamStarted(total: total) }
        if let total { try checkDiskSpace(needed: total) }
        try file.allocate(size: 0)
        emit(force: true)
        let (size, digest) = try await withStallWatchdog { counter in
            let hasher = PrefixHasher(bufferSize: 0)
            var offset: Int64 = 0
            for try await chunk in response.body {
                let count = chunk.count
                if let total, offset + Int64(count) > total {
                    throw ModelDepotError(
                        .protocolViolation, "\(self.request.url) sent more bytes than its Content-Length of \(total).")
                }
                try await self.store(chunk, count: count, at: offset, in: file, counter: counter)
                chunk.withUnsafeBytes { hasher.update($0) }
                offset += Int64(count)
                counter.add(count)
                self.recordStreamedBytes(count)
            }
            return (offset, hasher.finalize())
        }
        try flow.withLock { try $0.streamEnded(size: size, digest: digest) }
    }

    private func recordStreamedBytes(_ count: Int) {
        let now = clock.elapsed()
        let onDisk = flow.withLock { flow in
            flow.streamed(count)
            report(&flow, now: now, force: false)
            return onDiskHandler == nil ? nil : flow.bytesOnDisk
        }
        if let onDisk { onDiskHandler?(onDisk) }
    }
}
