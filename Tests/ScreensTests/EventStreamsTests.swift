import Foundation
import Hummingbird
import ModelDepotTesting
import NIOCore
import Synchronization
import Testing

@testable import ModelDepotWeb

/// An event stream's memory when its client stops reading: a stream of states keeps only the newest one waiting.
@Suite struct EventStreamsTests {
    /// A client that reads the first write and then stops until it is let go, keeping what it got.
    final class Seen: Sendable {
        let written = Mutex<[String]>([])
        let reading = Mutex<CheckedContinuation<Void, Never>?>(nil)
        let stalled = Mutex(false)
    }

    struct StalledClient: ResponseBodyWriter {
        let seen: Seen

        mutating func write(_ buffer: ByteBuffer) async throws {
            let text = String(buffer: buffer)
            guard !text.hasPrefix(":") else { return }  // heartbeats
            let first = seen.written.withLock { written in
                defer { written.append(text) }
                return written.isEmpty
            }
            if first {
                await withCheckedContinuation { continuation in
                    seen.reading.withLock { $0 = continuation }
                    seen.stalled.withLock { $0 = true }
                }
            }
        }

        consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
    }

    @Test func aStalledClientOfAStateStreamHoldsOnlyTheNewestState() async throws {
        let streams = EventStreams(heartbeat: .seconds(3600))
        let sent = Mutex(0)
        let body = streams.body(latestOnly: true) { send in
            for number in 1...500 {
                send(ByteBuffer(string: "event: update\ndata: \(number)\n\n"))
                sent.withLock { $0 = number }
                await Task.yield()
            }
        }
        let seen = Seen()
        let serving = Task { try await body.write(StalledClient(seen: seen)) }
        #expect(await waitUntil { seen.stalled.withLock { $0 } && sent.withLock { $0 } == 500 })
        seen.reading.withLock { $0 }?.resume()
        try await serving.value
        let events = seen.written.withLock { $0 }
        // The first state, then the newest: the 498 between were replaced while the client did not read.
        #expect(events.count == 2, "\(events.count) events written")
        #expect(events.first == "event: update\ndata: 1\n\n" && events.last == "event: update\ndata: 500\n\n")
    }
}
