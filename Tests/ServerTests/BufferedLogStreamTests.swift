import Foundation
import Logging
import Synchronization
import Testing

@testable import ModelDepotHTTP

/// The server's log: lines in swift-log's stream format, every one kept and in order, and a flush that gives up at
/// its deadline when standard error is a pipe nobody reads.
@Suite struct BufferedLogStreamTests {
    final class Captured: TextOutputStream, @unchecked Sendable {
        let text = Mutex("")
        func write(_ string: String) { text.withLock { $0 += string } }
    }

    /// Reads `pipe` to its end on another thread; the returned function waits for that end and gives the bytes.
    static func startReading(_ pipe: Pipe) -> () -> Data {
        let read = Mutex(Data())
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            let data = pipe.fileHandleForReading.readDataToEndOfFile()
            read.withLock { $0 = data }
            done.signal()
        }
        return {
            done.wait()
            return read.withLock { $0 }
        }
    }

    @Test func linesReadAsStreamLogHandlersDoApartFromTheirTime() throws {
        let pipe = Pipe()
        let stream = BufferedLogStream(handle: pipe.fileHandleForWriting)
        let captured = Captured()
        var ours = Logger(label: "mirror") {
            BufferedLogStream.Handler(label: $0, stream: stream, metadataProvider: nil)
        }
        var theirs = Logger(label: "mirror") { StreamLogHandler(label: $0, stream: captured, metadataProvider: nil) }
        ours[metadataKey: "b"] = "2"
        theirs[metadataKey: "b"] = "2"
        ours.info("GET /healthz 200", metadata: ["a": "1", "ms": "0"])
        theirs.info("GET /healthz 200", metadata: ["a": "1", "ms": "0"])
        ours.error("stopping", metadata: nil)
        theirs.error("stopping", metadata: nil)
        ours.debug("not shown")
        let written = try Self.expectSameLines(stream, pipe, captured, count: 2)
        #expect(
            written.range(of: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d{4} info"#, options: .regularExpression) != nil)
    }

    /// Values of every kind, an error, an empty label and text past ASCII read as `StreamLogHandler` writes them; and
    /// the handler fits an existential's three inline words, which is what keeps a request's logger cheap to copy.
    @Test func everyKindOfValueAnErrorAndAnEmptyLabelReadAsStreamLogHandlersDo() throws {
        struct Refused: Error, CustomStringConvertible { var description: String { "refusé" } }
        #expect(MemoryLayout<BufferedLogStream.Handler>.size <= 3 * MemoryLayout<Int>.size)
        let pipe = Pipe()
        let stream = BufferedLogStream(handle: pipe.fileHandleForWriting)
        let captured = Captured()
        for label in ["mirror", ""] {
            var ours = Logger(label: label) {
                BufferedLogStream.Handler(label: $0, stream: stream, metadataProvider: nil)
            }
            var theirs = Logger(label: label) { StreamLogHandler(label: $0, stream: captured, metadataProvider: nil) }
            ours[metadataKey: "request"] = .stringConvertible(42)
            theirs[metadataKey: "request"] = .stringConvertible(42)
            let metadata: Logger.Metadata = [
                "list": ["a", .stringConvertible(1)], "map": ["k": "v"], "naïve": "çà", "empty": "",
            ]
            ours.info("über \(label)", metadata: metadata)
            theirs.info("über \(label)", metadata: metadata)
            ours.warning("refused", error: Refused())
            theirs.warning("refused", error: Refused())
            ours.info("only the logger's own")
            theirs.info("only the logger's own")
        }
        try Self.expectSameLines(stream, pipe, captured, count: 6)
    }

    /// Flushes `stream` into `pipe` and expects its lines to be `captured`'s (a `StreamLogHandler`'s) but for the
    /// timestamp (`2026-11-29T02:22:48+0000`), the one part that may differ: the second may turn between. Returns
    /// what `stream` wrote.
    @discardableResult
    static func expectSameLines(_ stream: BufferedLogStream, _ pipe: Pipe, _ captured: Captured, count: Int) throws
        -> String
    {
        #expect(stream.flush(within: .seconds(30)))
        try pipe.fileHandleForWriting.close()
        let written = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let expected = captured.text.withLock { $0 }
        func untimed(_ text: String) -> [Substring] {
            text.split(separator: "\n").map { $0.drop { $0 != " " } }
        }
        #expect(untimed(written) == untimed(expected), "\(written) against \(expected)")
        #expect(written.split(separator: "\n").count == count)
        return written
    }

    /// A metadata provider, given at the start or set later on one copy of a logger, adds its keys to that copy's
    /// lines only, as `StreamLogHandler`'s does.
    @Test func aMetadataProviderSetOnOneLoggerAddsItsKeysToItsLinesOnly() throws {
        let pipe = Pipe()
        let stream = BufferedLogStream(handle: pipe.fileHandleForWriting)
        let first = Logger(label: "mirror") {
            BufferedLogStream.Handler(
                label: $0, stream: stream, metadataProvider: Logger.MetadataProvider { ["trace": "t1"] })
        }
        var second = first
        second.handler.metadataProvider = Logger.MetadataProvider { ["span": "s2"] }
        first.info("one")
        second.info("two", metadata: ["ms": "3"])
        #expect(stream.flush(within: .seconds(30)))
        try pipe.fileHandleForWriting.close()
        let lines = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            .split(separator: "\n").map { $0.drop { $0 != " " } }
        #expect(lines == [" info mirror: trace=t1 [ServerTests] one", " info mirror: ms=3 span=s2 [ServerTests] two"])
    }

    /// Standard error is a pipe nobody reads: a flush returns at its deadline instead of holding the caller, and
    /// once the pipe is read every line arrives, in order.
    @Test func aFlushGivesUpAtItsDeadlineAndNoLineIsLost() throws {
        let pipe = Pipe()
        let stream = BufferedLogStream(handle: pipe.fileHandleForWriting)
        let line = String(repeating: "x", count: 1000)
        // Well past what a pipe holds (64 KiB by default on Linux, 1 MiB with 64 KiB pages), below the stream's own
        // limit.
        for number in 0..<3000 { stream.write("\(number) \(line)\n") }
        #expect(!stream.flush(within: .milliseconds(50)), "a blocked pipe cannot have taken 3 MB")
        let readToEnd = Self.startReading(pipe)
        stream.flush()
        try pipe.fileHandleForWriting.close()
        let lines = String(decoding: readToEnd(), as: UTF8.self).split(separator: "\n")
        #expect(lines.count == 3000)
        #expect(lines.map { Int($0.prefix { $0 != " " }) } == (0..<3000).map { $0 })
    }

    /// Lines from several threads while the writer lets batches gather, with writes and flushes interleaved: every
    /// line arrives once, each thread's in its order, and a flush never waits out a gathering it did not need.
    @Test func linesFromManyThreadsArriveWholeAndInOrder() throws {
        let pipe = Pipe()
        let stream = BufferedLogStream(handle: pipe.fileHandleForWriting)
        let readToEnd = Self.startReading(pipe)
        let threads = 4
        let lines = 2000
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            for number in 0..<lines {
                stream.write("\(thread) \(number)\n")
                if number % 500 == 0 { #expect(stream.flush(within: .seconds(30))) }
            }
        }
        stream.flush()
        try pipe.fileHandleForWriting.close()
        let written = String(decoding: readToEnd(), as: UTF8.self).split(separator: "\n")
        #expect(written.count == threads * lines)
        for thread in 0..<threads {
            let numbers = written.filter { $0.hasPrefix("\(thread) ") }.map { Int($0.split(separator: " ")[1]) }
            #expect(numbers == (0..<lines).map { $0 })
        }
    }

    /// A line nobody flushes still goes out: a line wakes the idle writer thread by itself.
    @Test func aLineAloneIsWrittenWithoutAFlush() throws {
        let pipe = Pipe()
        let stream = BufferedLogStream(handle: pipe.fileHandleForWriting)
        stream.write("alone\n")
        // Blocks until the line is there; a lost wake-up would hold this read for ever (the suite's time limit).
        let data = pipe.fileHandleForReading.readData(ofLength: 6)
        #expect(String(decoding: data, as: UTF8.self) == "alone\n")
    }

    /// Past its limit a writer waits for the pipe, and once the pipe is read again every line of every writer
    /// arrives, in order: nothing deadlocks between writers held back and the thread that lets lines gather.
    @Test func writersHeldBackByTheLimitGoOnOnceThePipeIsRead() throws {
        let pipe = Pipe()
        let stream = BufferedLogStream(handle: pipe.fileHandleForWriting, limit: 1024)
        let line = String(repeating: "y", count: 100)
        let writers = DispatchGroup()
        for writer in 0..<3 {
            DispatchQueue.global().async(group: writers) {
                for number in 0..<2000 { stream.write("\(writer) \(number) \(line)\n") }
            }
        }
        // 600 KB against a 64 KiB pipe and a 1 KiB limit: the writers are held back until this read starts.
        #expect(writers.wait(timeout: .now() + .milliseconds(200)) == .timedOut)
        let readToEnd = Self.startReading(pipe)
        writers.wait()
        stream.flush()
        try pipe.fileHandleForWriting.close()
        let lines = String(decoding: readToEnd(), as: UTF8.self).split(separator: "\n")
        #expect(lines.count == 6000)
        for writer in 0..<3 {
            let numbers = lines.filter { $0.hasPrefix("\(writer) ") }.map { Int($0.split(separator: " ")[1]) }
            #expect(numbers == (0..<2000).map { $0 })
        }
    }
}
