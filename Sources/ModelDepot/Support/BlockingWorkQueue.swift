import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Runs blocking work (hashing a file, reading it back) on a thread of its own, off the cooperative pool.
///
/// The pool has one thread per core. A SHA-256 pass over tens of megabytes held one of this machine's two
/// for ~60 ms at a time, while every connection's writes queued on the other and the sockets filled up.
///
/// `.background` work runs only when a core would otherwise idle (Linux `SCHED_IDLE` on a thread this
/// queue owns; a `.utility` dispatch queue on Apple platforms, where dispatch honours QoS). A priority
/// cannot be raised again without privileges on Linux, so background work gets a thread of its own rather
/// than a shared dispatch worker.
final class BlockingWorkQueue: Sendable {
    enum Priority: Sendable {
        case normal
        /// Yields to everything else; for work that can catch up later.
        case background
    }

    private let queue: DispatchQueue?
    private let thread: WorkerThread?

    init(label: String, priority: Priority = .normal) {
        #if os(Linux)
            if priority == .background {
                thread = WorkerThread(name: label)
                queue = nil
                return
            }
            queue = DispatchQueue(label: label)
        #else
            queue = DispatchQueue(label: label, qos: priority == .background ? .utility : .userInitiated)
        #endif
        thread = nil
    }

    deinit { thread?.stop() }

    /// Runs `work` on the queue's thread and returns its result; not interruptible once started.
    func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let job: @Sendable () -> Void = { continuation.resume(with: Result { try work() }) }
            if let thread { thread.submit(job) } else { queue!.async(execute: job) }
        }
    }
}

/// One thread that runs submitted jobs in order, at idle priority, until stopped.
private final class WorkerThread: Sendable {
    private let jobs = Mutex<(pending: [@Sendable () -> Void], stopped: Bool)>(([], false))
    private let available = DispatchSemaphore(value: 0)

    init(name: String) {
        // The thread holds this object until stop() lets it end.
        let thread = Thread { self.work() }
        thread.name = name
        thread.start()
    }

    private func work() {
        #if canImport(Glibc)
            var parameters = sched_param()
            // SCHED_IDLE (5 in linux/sched.h; Glibc's module does not export the name).
            _ = pthread_setschedparam(pthread_self(), 5, &parameters)
        #endif
        while true {
            available.wait()
            let next = jobs.withLock { jobs -> (@Sendable () -> Void)? in
                jobs.pending.isEmpty ? nil : jobs.pending.removeFirst()
            }
            guard let next else { return }  // woken with nothing to do: stopped
            next()
        }
    }

    func submit(_ job: @escaping @Sendable () -> Void) {
        let accepted = jobs.withLock { jobs -> Bool in
            guard !jobs.stopped else { return false }
            jobs.pending.append(job)
            return true
        }
        if accepted { available.signal() } else { job() }
    }

    /// Lets the thread finish the jobs already submitted, then end.
    func stop() {
        jobs.withLock { $0.stopped = true }
        available.signal()
    }
}
