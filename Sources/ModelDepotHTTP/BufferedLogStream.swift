import Foundation
import Logging

/// Standard error for a server's log, written by a thread of its own: a request's access-log line costs its
/// formatting and an append, never a system call on the event loop or the cooperative pool, and lines that arrive
/// while one batch is written go out together in the next.
///
/// Every line is kept, in order: past ``limit`` unwritten bytes (standard error blocked: a pipe nobody reads) a
/// writer waits, as a direct write would. What is pending is written before the process exits through `exit`
/// (the end of `main`, a signal's stop), waiting at most ``exitFlushTimeout`` so that a standard error nobody
/// reads cannot hold the exit.
public final class BufferedLogStream: TextOutputStream, @unchecked Sendable {
    /// One per process, for `FileHandle.standardError`.
    public static let standardError = BufferedLogStream(handle: .standardError)

    /// Unwritten bytes past which writers wait.
    let limit = 4 << 20
    /// How long the exit waits for pending lines.
    static let exitFlushTimeout: TimeInterval = 1
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
        atexit { _ = BufferedLogStream.standardError.flush(within: BufferedLogStream.exitFlushTimeout) }
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

    /// Waits at most `seconds` for every line written so far to be out; false if some were still pending.
    @discardableResult
    public func flush(within seconds: TimeInterval) -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        condition.lock()
        defer { condition.unlock() }
        while !pending.isEmpty || writing {
            if !condition.wait(until: deadline) { return pending.isEmpty && !writing }
        }
        return true
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

extension BufferedLogStream {
    /// swift-log's stream handler over the buffered stream, except that an error is out before the call returns:
    /// the line that says why a process is about to stop must not wait behind the access log.
    public struct Handler: LogHandler {
        private var base: StreamLogHandler
        private let stream: BufferedLogStream

        public init(label: String, stream: BufferedLogStream = .standardError) {
            self.base = StreamLogHandler(label: label, stream: stream)
            self.stream = stream
        }

        public var logLevel: Logger.Level {
            get { base.logLevel }
            set { base.logLevel = newValue }
        }

        public var metadata: Logger.Metadata {
            get { base.metadata }
            set { base.metadata = newValue }
        }

        public var metadataProvider: Logger.MetadataProvider? {
            get { base.metadataProvider }
            set { base.metadataProvider = newValue }
        }

        public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { base[metadataKey: key] }
            set { base[metadataKey: key] = newValue }
        }

        public func log(event: LogEvent) {
            base.log(event: event)
            if event.level >= .error { stream.flush(within: BufferedLogStream.exitFlushTimeout) }
        }
    }
}
