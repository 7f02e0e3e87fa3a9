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
