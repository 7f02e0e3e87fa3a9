import Foundation

/// Standard error for a server's log, written by a thread of its own: a request's access-log line costs its
/// formatting and an append, never a system call on the event loop or the cooperative pool, and lines that arrive
/// while one batch is written go out together in the next.
///
/// Every line is kept, in order: past ``limit`` unwritten bytes (standard error blocked: a pipe nobody reads) a
/// writer waits, as a direct write would. What is pending is written before the process exits through `exit`
/// (the end of `main`, ``flush()`` from a signal's handler path).
public final class BufferedLogStream: TextOutputStream, @unchecked Sendable {
    /// One per process, for `FileHandle.standardError`.
    public static let standardError = BufferedLogStream(handle: .standardError)

    /// Unwritten bytes past which writers wait.
    let limit = 4 << 20
    private let handle: FileHandle
    // Guarded by `condition`: the thread waits on it for lines, and flushers and blocked writers for the thread.
    private let condition = NSCondition()
    private var pending: [UInt8] = []
    private var writing = false

    init(handle: FileHandle) {
        self.handle = handle
        let thread = Thread { [unowned self] in self.writeForever() }
        thread.name = "ModelDepot.log"
        thread.start()
        atexit { BufferedLogStream.standardError.flush() }
    }

    public func write(_ string: String) {
        condition.lock()
        while pending.count > limit { condition.wait() }
        let wasEmpty = pending.isEmpty
        pending.append(contentsOf: string.utf8)
        if wasEmpty { condition.broadcast() }
        condition.unlock()
    }

    /// Returns once every line written so far is out.
    public func flush() {
        condition.lock()
        while !pending.isEmpty || writing { condition.wait() }
        condition.unlock()
    }

    private func writeForever() {
        while true {
            condition.lock()
            while pending.isEmpty { condition.wait() }
            let batch = pending
            pending.removeAll(keepingCapacity: true)
            writing = true
            condition.unlock()
            try? handle.write(contentsOf: batch)
            condition.lock()
            writing = false
            condition.broadcast()
            condition.unlock()
        }
    }
}
