import Dispatch

/// Runs blocking work (hashing a file, reading it back) on a thread of its own, off the cooperative pool.
///
/// The pool has one thread per core. A SHA-256 pass over tens of megabytes held one of this machine's two
/// for ~60 ms at a time, while every connection's writes queued on the other and the sockets filled up.
package final class BlockingWorkQueue: Sendable {
    private let queue: DispatchQueue

    package init(label: String) {
        queue = DispatchQueue(label: label)
    }

    /// Runs `work` on the queue's thread and returns its result; not interruptible once started.
    package func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try work() }) }
        }
    }
}

/// Blocking work that any async code may hand off: hashing a file, `fsync`, reading a large file, walking a cache.
///
/// Swift's cooperative pool has one thread per core (two on this project's machines) and never grows when they
/// block: a blocking call made on it takes that thread from every server, download and task in the process until
/// it returns. `BlockingWork.run` moves the call to a thread of its own and suspends the caller meanwhile.
///
/// Each call gets a serial Dispatch queue of its own, which Dispatch backs by its overcommitting pool: a thread
/// starts whenever none is free (up to Dispatch's limit of 255). A shared concurrent queue does not do that:
/// measured on this toolchain, its threads stop at one per core while the work is busy hashing, so two long
/// verifications made a 3-byte hash for a mirror's API call wait 16 s behind them. Work that must keep an order
/// goes on a ``BlockingWorkQueue`` instead.
package enum BlockingWork {
    /// Runs `work` on a thread off the cooperative pool and returns its result; not interruptible once started.
    package static func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue(label: "ModelDepot.blocking").async { continuation.resume(with: Result { try work() }) }
        }
    }
}
