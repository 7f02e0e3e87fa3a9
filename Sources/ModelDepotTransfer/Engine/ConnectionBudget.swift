import ModelDepotCore
import Synchronization

/// A limit on connections shared by several downloads, so that a pull of many files uses, say, 16
/// connections in all rather than 16 per file.
///
/// Each download's first connection is paid for by whoever started it (the snapshot downloader takes one
/// permit per file in flight); every additional parallel range takes a permit for the length of one segment
/// and gives it back after, so connections flow to whichever file still has ranges left.
package final class ConnectionBudget: Sendable {
    package let limit: Int
    private let available: Mutex<Int>
    private let counts = Mutex((waiting: 0, peakInUse: 0))
    let signal = ChangeSignal()

    package init(limit: Int) {
        self.limit = max(1, limit)
        self.available = Mutex(max(1, limit))
    }

    /// Takes a permit if one is free.
    func tryAcquire() -> Bool {
        available.withLock { count in
            guard count > 0 else { return false }
            count -= 1
            return true
        }
    }

    /// Waits for a permit; throws `CancellationError` when the task is cancelled first.
    package func acquire() async throws {
        counts.withLock { $0.waiting += 1 }
        defer { counts.withLock { $0.waiting -= 1 } }
        while true {
            try Task.checkCancellation()
            let seen = signal.generation
            if tryAcquire() { return }
            await signal.wait(after: seen)
        }
    }

    /// Records the permits now in use in ``peakInUse`` (callers that report it call this after acquiring).
    func noteInUse() {
        let inUse = limit - free
        counts.withLock { $0.peakInUse = max($0.peakInUse, inUse) }
    }

    /// Tasks waiting in ``acquire()`` right now.
    package var waiting: Int { counts.withLock { $0.waiting } }

    /// The most permits in use at once, as ``noteInUse()`` saw them.
    package var peakInUse: Int { counts.withLock { $0.peakInUse } }

    package func release() {
        available.withLock { $0 += 1 }
        signal.notify()
    }

    /// Permits free right now.
    package var free: Int { available.withLock { $0 } }
}

/// Returns when either signal moves past what its caller saw (or the task is cancelled).
func waitForEither(_ first: ChangeSignal, after firstSeen: Int, _ second: ChangeSignal, after secondSeen: Int) async {
    await withTaskGroup(of: Void.self) { group in
        group.addTask { await first.wait(after: firstSeen) }
        group.addTask { await second.wait(after: secondSeen) }
        await group.next()
        group.cancelAll()
    }
}
