import Foundation
import Hummingbird
import NIOCore

/// A file body that misbehaves as ``ServedFaults`` asks: throttled, cut short (the connection is dropped
/// part-way), or stalled (nothing more for a minute, then dropped).
enum FaultyFileBody {
    static let chunkSize = 64 << 10

    static func make(path: String, range: Range<Int>, fault: ServedFaults.Kind?, faults: ServedFaults) -> ResponseBody {
        ResponseBody { writer in
            let descriptor = open(path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { throw FaultInjected(reason: "cannot open \(path)") }
            defer { close(descriptor) }
            // A fault strikes somewhere in the first half of the range, after at least one chunk.
            let faultAt = range.lowerBound + min(range.count / 2, max(chunkSize, range.count / 4))
            var offset = range.lowerBound
            var buffer = [UInt8](repeating: 0, count: chunkSize)
            while offset < range.upperBound {
                if let fault, offset >= faultAt {
                    if fault == .stall { try await Task.sleep(for: .seconds(60)) }
                    // Throwing mid-body makes the server drop the connection: the client sees it cut short.
                    throw FaultInjected(reason: "\(fault.rawValue) injected at byte \(offset)")
                }
                let count = min(chunkSize, range.upperBound - offset)
                let read = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, count, off_t(offset)) }
                guard read > 0 else { throw FaultInjected(reason: "cannot read \(path)") }
                try await writer.write(ByteBuffer(bytes: buffer[0..<read]))
                offset += read
                if let rate = faults.bytesPerSecond {
                    try await Task.sleep(for: .nanoseconds(Int64(Double(read) / Double(rate) * 1e9)))
                }
            }
            try await writer.finish(nil)
        }
    }
}

struct FaultInjected: Error, CustomStringConvertible {
    let reason: String
    var description: String { "fault injected on purpose: \(reason)" }
}
