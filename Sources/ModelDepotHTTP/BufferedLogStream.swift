import Foundation
import Logging
import Synchronization

/// Standard error for a server's log, written by a thread of its own: a request's access-log line costs its
/// formatting and an append, never a system call on the event loop or the cooperative pool. After each batch the
/// thread lets lines gather for ``gatherMicroseconds``, and a line wakes it only when it is idle, so a busy server
/// pays one write per batch and no wake-up per line.
///
/// Every line is kept, in order: past ``limit`` unwritten bytes (standard error blocked: a pipe nobody reads) a
/// writer waits, as a direct write would. What is pending is written before the process exits through `exit`
/// (the end of `main`, a signal's stop), waiting at most ``exitFlushTimeout`` so that a standard error nobody
/// reads cannot hold the exit.
public final class BufferedLogStream: TextOutputStream, @unchecked Sendable {
    /// One per process, for `FileHandle.standardError`.
    public static let standardError: BufferedLogStream = {
        let stream = BufferedLogStream(handle: .standardError)
        atexit { _ = BufferedLogStream.standardError.flush(within: BufferedLogStream.exitFlushTimeout) }
        return stream
    }()

    /// Unwritten bytes past which writers wait.
    let limit: Int
    /// How long the exit waits for pending lines.
    static let exitFlushTimeout: Duration = .seconds(1)
    /// How long an error line's caller waits for it to be out.
    static let errorFlushTimeout: Duration = .milliseconds(250)
    /// How long the thread lets lines gather after writing a batch, unless a flush is waiting.
    static let gatherMicroseconds: UInt32 = 5_000
    private let handle: FileHandle
    // Guarded by `condition`: the thread waits on it for lines, and flushers and blocked writers for the thread.
    private let condition = NSCondition()
    private var pending: [UInt8] = []
    /// Bytes appended and bytes written since the start: a flush waits for what was appended before it, not for
    /// lines that keep arriving after it.
    private var appended = 0
    private var written = 0
    /// The thread waits for lines (a new line must wake it); otherwise it is writing or letting lines gather.
    private var writerIdle = false
    /// Callers waiting in a flush: the thread does not let lines gather while there are any.
    private var flushers = 0

    init(handle: FileHandle, limit: Int = 4 << 20) {
        self.handle = handle
        self.limit = limit
        let thread = Thread { [unowned self] in self.writeForever() }
        thread.name = "ModelDepot.log"
        thread.start()
    }

    public func write(_ string: String) {
        writeLine { $0.append(contentsOf: string.utf8) }
    }

    /// Appends what `build` appends to the unwritten bytes, in one piece: a line assembled in place rather than
    /// in a string of its own first. `build` runs under the stream's lock, so it only copies bytes already at
    /// hand: no caller's code (a `description`), nothing that logs or waits.
    func writeLine(_ build: (inout [UInt8]) -> Void) {
        condition.lock()
        while pending.count > limit { condition.wait() }
        let before = pending.count
        build(&pending)
        appended += pending.count - before
        if writerIdle {
            writerIdle = false
            condition.broadcast()
        }
        condition.unlock()
    }

    /// Returns once every line written so far is out.
    public func flush() {
        condition.lock()
        let target = appended
        flushers += 1
        condition.broadcast()
        while written < target { condition.wait() }
        flushers -= 1
        condition.unlock()
    }

    /// Waits at most `timeout` (by the monotonic clock) for every line written so far to be out; false if some
    /// were still pending.
    @discardableResult
    public func flush(within timeout: Duration) -> Bool {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        condition.lock()
        let target = appended
        flushers += 1
        condition.broadcast()
        defer {
            flushers -= 1
            condition.unlock()
        }
        while written < target {
            let left = clock.now.duration(to: deadline)
            guard left > .zero else { return false }
            let seconds = Double(left.components.seconds) + Double(left.components.attoseconds) / 1e18
            _ = condition.wait(until: Date(timeIntervalSinceNow: seconds))
        }
        return true
    }

    private func writeForever() {
        while true {
            condition.lock()
            while pending.isEmpty {
                writerIdle = true
                condition.wait()
            }
            writerIdle = false
            let batch = pending
            pending.removeAll(keepingCapacity: true)
            condition.unlock()
            try? handle.write(contentsOf: batch)
            condition.lock()
            written += batch.count
            condition.broadcast()
            // Let lines gather unless someone waits for them (a flush, or writers held back by the limit). A
            // sleep, not a timed wait: `NSCondition` waits by the wall clock, which a clock step can hold back for
            // as long as the step, and lines would pile up until writers block. A flush or a writer arriving
            // meanwhile waits at most this long more.
            let gathers = flushers == 0 && pending.count <= limit
            condition.unlock()
            if gathers { usleep(Self.gatherMicroseconds) }
        }
    }
}

extension BufferedLogStream {
    /// Log lines in swift-log's `StreamLogHandler` format (`2026-11-29T02:22:48+0000 info label: k=v [Module]
    /// message`), written to a ``BufferedLogStream``, at a server's request rate: the metadata a server sets on
    /// every request's logger (Hummingbird's request id) is not formatted until a line is written, and the
    /// timestamp is formatted once a second, not once a line. An error's caller waits for its line to be out (at
    /// most ``BufferedLogStream/errorFlushTimeout``, however busy the log): the line that says why a process is
    /// about to stop must not be lost behind the access log.
    public struct Handler: LogHandler {
        public var logLevel: Logger.Level = .info
        public var metadata = Logger.Metadata()
        /// The rest, in one reference, so that the handler fits an existential's three inline words: setting
        /// metadata on a request's copy of a logger (Hummingbird's request id, on every request) copies the
        /// logger's storage with the handler in it, and no box of the handler's own besides.
        private var sink: Sink

        private final class Sink: Sendable {
            let label: String
            let stream: BufferedLogStream
            let metadataProvider: Logger.MetadataProvider?

            init(label: String, stream: BufferedLogStream, metadataProvider: Logger.MetadataProvider?) {
                self.label = label
                self.stream = stream
                self.metadataProvider = metadataProvider
            }
        }

        public init(
            label: String, stream: BufferedLogStream = .standardError,
            metadataProvider: Logger.MetadataProvider? = LoggingSystem.metadataProvider
        ) {
            sink = Sink(label: label, stream: stream, metadataProvider: metadataProvider)
        }

        public var metadataProvider: Logger.MetadataProvider? {
            get { sink.metadataProvider }
            set { sink = Sink(label: sink.label, stream: sink.stream, metadataProvider: newValue) }
        }

        public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        public func log(event: LogEvent) {
            // An access-log line has one key of its own and none from the handler or a provider: no merging.
            var merged = metadata
            if let provided = sink.metadataProvider?.get(), !provided.isEmpty {
                merged.merge(provided) { _, provided in provided }
            }
            if let explicit = event.metadata, !explicit.isEmpty {
                if merged.isEmpty {
                    merged = explicit
                } else {
                    merged.merge(explicit) { _, explicit in explicit }
                }
            }
            if let error = event.error {
                merged["error.message"] = "\(error)"
                merged["error.type"] = "\(String(reflecting: type(of: error)))"
            }
            // Every value is text before the stream's lock is taken: a value's `description` is the caller's code.
            var single: (key: String, text: String)?
            var several: [(key: String, text: String)] = []
            if merged.count == 1, let (key, value) = merged.first {
                single = (key, Self.text(value))
            } else if !merged.isEmpty {
                several = merged.sorted { $0.key < $1.key }.map { ($0.key, Self.text($0.value)) }
            }
            let timestamp = LogTimestamp.now()
            let message = event.message.description
            let label = sink.label
            sink.stream.writeLine { line in
                Self.append(timestamp, to: &line)
                line.append(UInt8(ascii: " "))
                Self.append(event.level.rawValue, to: &line)
                if !label.isEmpty {
                    line.append(UInt8(ascii: " "))
                    Self.append(label, to: &line)
                }
                line.append(UInt8(ascii: ":"))
                if let single { Self.append(single.key, single.text, to: &line) }
                for field in several { Self.append(field.key, field.text, to: &line) }
                line.append(contentsOf: " [".utf8)
                Self.append(event.source, to: &line)
                line.append(contentsOf: "] ".utf8)
                Self.append(message, to: &line)
                line.append(UInt8(ascii: "\n"))
            }
            if event.level >= .error { sink.stream.flush(within: BufferedLogStream.errorFlushTimeout) }
        }

        /// `text`'s bytes, copied from where they lie (a generic append of its UTF-8 view retained it once more).
        private static func append(_ text: String, to line: inout [UInt8]) {
            if text.utf8.withContiguousStorageIfAvailable({ line.append(contentsOf: $0) }) == nil {
                line.append(contentsOf: text.utf8)
            }
        }

        private static func append(_ key: String, _ text: String, to line: inout [UInt8]) {
            line.append(UInt8(ascii: " "))
            Self.append(key, to: &line)
            line.append(UInt8(ascii: "="))
            Self.append(text, to: &line)
        }

        /// A metadata value as `StreamLogHandler` writes it.
        private static func text(_ value: Logger.MetadataValue) -> String {
            if case .string(let text) = value { return text }
            return value.description
        }
    }
}

/// The local time, as `StreamLogHandler` prints it, formatted at most once a second.
enum LogTimestamp {
    private static let last = Mutex<(second: Int, text: String)>((-1, ""))

    static func now() -> String {
        var clock = time(nil)
        if let cached = last.withLock({ $0.second == Int(clock) ? $0.text : nil }) { return cached }
        var local = tm()
        var buffer = [CChar](repeating: 0, count: 64)
        let text: String
        if localtime_r(&clock, &local) != nil, strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%S%z", &local) > 0 {
            text = buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        } else {
            text = "<unknown>"
        }
        last.withLock { $0 = (Int(clock), text) }
        return text
    }
}
