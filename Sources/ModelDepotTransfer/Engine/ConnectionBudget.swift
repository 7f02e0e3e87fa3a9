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
    private let waiters = Mutex(0)
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
        waiters.withLock { $0 += 1 }
        defer { waiters.withLock { $0 -= 1 } }
        while true {
            try Task.checkCancellation()
            let seen = signal.generation
            if tryAcquire() { return }
            await signal.wait(after: seen)
        }
    }

    /// Tasks waiting in ``acquire()`` right now.
    package var waiting: Int { waiters.withLock { $0 } }

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
