import Foundation
import ModelDepotCore
import ModelDepotTesting
import Synchronization
import Testing

@testable import ModelDepotServer

/// A response follows a pull by waiting for its bytes; the wait must end with its task, or a stuck upstream holds the
/// server's stop until it gives up on it (the drain cancels its handlers after the timeout).
@Suite(.timeLimit(.minutes(1))) struct BlobPullTests {
    static func pull() -> BlobPull {
        BlobPull(etag: "abc", size: 100, partialPath: "/nonexistent/partial", blobPath: "/nonexistent/blob")
    }

    @Test func aWaitingReaderReturnsWhenItsTaskIsCancelled() async {
        let pull = Self.pull()
        let started = Mutex(false)
        let reader = Task {
            started.withLock { $0 = true }
            return await pull.releasable(from: 0)
        }
        #expect(await waitUntil { started.withLock { $0 } })
        reader.cancel()
        #expect(await reader.value == nil, "a cancelled reader gets nil, as for a pull that failed")
    }

    @Test func aReaderCancelledBeforeItWaitsDoesNotWait() async {
        let pull = Self.pull()
        let reader = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await pull.releasable(from: 0)
        }
        #expect(await reader.value == nil)
    }

    @Test func bytesWrittenStillReachAWaitingReader() async {
        let pull = Self.pull()
        let reader = Task { await pull.releasable(from: 0) }
        var written = ByteRangeSet()
        written.insert(0..<40)
        pull.wrote(written)
        #expect(await reader.value == 40)
    }
}
