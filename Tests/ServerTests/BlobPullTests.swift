import Foundation
import ModelDepot
import ModelDepotTesting
import Synchronization
import Testing

@testable import ModelDepotServer

/// A response follows a pull by waiting for its bytes; the wait must end with its task, or a stuck upstream holds the
/// server's stop until it gives up on it (the drain cancels its handlers after the timeout).
@Suite(.timeLimit(.minutes(2))) struct BlobPullTests {
    static func pull() -> BlobPull {
        BlobPull(etag: "abc", size: 100, partialPath: "/nonexistent/partial", blobPath: "/nonexistent/blob")
    }

    static func bytes(_ range: Range<Int64>) -> ByteRangeSet {
        var set = ByteRangeSet()
        set.insert(range)
        return set
    }

    @Test func aWaitingReaderReturnsWhenItsTaskIsCancelled() async {
        let pull = Self.pull()
        let reader = Task { await pull.releasable(from: 0) }
        #expect(await waitUntil { pull.waitingReaders == 1 }, "the reader waits")
        reader.cancel()
        #expect(await reader.value == nil, "a cancelled reader gets nil, as for a pull that failed")
        #expect(pull.waitingReaders == 0)
    }

    @Test func aReaderCancelledBeforeItWaitsDoesNotWait() async {
        let pull = Self.pull()
        let reader = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await pull.releasable(from: 0)
        }
        #expect(await reader.value == nil)
        #expect(pull.waitingReaders == 0)
    }

    @Test func bytesWrittenReachAWaitingReader() async {
        let pull = Self.pull()
        let reader = Task { await pull.releasable(from: 0) }
        #expect(await waitUntil { pull.waitingReaders == 1 })
        pull.wrote(Self.bytes(0..<40))
        #expect(await reader.value == 40)
    }

    /// Cancellations racing the pull's own wake-ups: every reader returns once (a continuation resumed twice, or
    /// never, would crash or hang here).
    @Test func cancellationsRacingWritesAndTheEndResumeEveryReaderOnce() async {
        for round in 0..<20 {
            let pull = Self.pull()
            let readers = (0..<16).map { index in Task { await pull.releasable(from: Int64(index % 4) * 20) } }
            #expect(await waitUntil { pull.waitingReaders == 16 }, "round \(round)")
            for (index, reader) in readers.enumerated() where index % 2 == 0 { reader.cancel() }
            pull.wrote(Self.bytes(0..<30))
            pull.finished(.verified)
            for (index, reader) in readers.enumerated() {
                let end = await reader.value
                if index % 2 == 1 { #expect(end != nil, "round \(round): reader \(index) was not cancelled") }
            }
            #expect(pull.waitingReaders == 0)
        }
    }
}
