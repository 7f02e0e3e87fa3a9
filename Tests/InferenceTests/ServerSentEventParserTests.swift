import ModelDepot
import Testing

@testable import ModelDepotInference

@Suite struct ServerSentEventParserTests {
    private func events(_ text: String, splitEvery step: Int? = nil) throws -> [ServerSentEvent] {
        var parser = ServerSentEventParser()
        let bytes = Array(text.utf8)
        guard let step else { return try parser.parse(bytes) }
        var result: [ServerSentEvent] = []
        var index = 0
        while index < bytes.count {
            result += try parser.parse(bytes[index..<min(bytes.count, index + step)])
            index += step
        }
        return result
    }

    @Test func linesEndInLFOrCRLFOrCRAlike() throws {
        let expected = [ServerSentEvent(data: "one"), ServerSentEvent(data: "two")]
        #expect(try events("data: one\n\ndata: two\n\n") == expected)
        #expect(try events("data: one\r\n\r\ndata: two\r\n\r\n") == expected)
        #expect(try events("data: one\r\rdata: two\r\r") == expected)
    }

    @Test func aCRLFSplitAcrossReadsIsOneLineEnd() throws {
        // Byte by byte, every CR arrives in one read and its LF in the next.
        let text = "data: one\r\n\r\ndata: two\r\ndata: more\r\n\r\n"
        #expect(try events(text, splitEvery: 1) == [ServerSentEvent(data: "one"), ServerSentEvent(data: "two\nmore")])
        for step in 2...7 { #expect(try events(text, splitEvery: step) == events(text)) }
    }

    @Test func dataLinesJoinWithNewlinesAndOnlyOneSpaceIsDropped() throws {
        #expect(try events("data:a\ndata:  b\ndata\ndata: c\n\n") == [ServerSentEvent(data: "a\n b\n\nc")])
    }

    @Test func commentsAreCountedAndNotEvents() throws {
        var parser = ServerSentEventParser()
        let result = try parser.parse(Array(": ping - 2026-11-22\n\n:\ndata: x\n\n: again\n".utf8))
        #expect(result == [ServerSentEvent(data: "x")])
        #expect(parser.commentCount == 3)
        #expect(!parser.hasPendingEvent)
    }

    @Test func eventTypeIdAndRetryFields() throws {
        var parser = ServerSentEventParser()
        let result = try parser.parse(
            Array("event: update\nid: 7\nretry: 1500\nretry: soon\ndata: x\n\ndata: y\n\n".utf8))
        #expect(
            result == [
                ServerSentEvent(type: "update", data: "x", lastEventID: "7"),
                ServerSentEvent(type: "message", data: "y", lastEventID: "7"),
            ])
        #expect(parser.retryMilliseconds == 1500)
    }

    @Test func anEventWithoutDataIsNotDispatchedAndUnknownFieldsAreIgnored() throws {
        #expect(try events("event: nothing\n\nfoo: bar\ndata: kept\n\n") == [ServerSentEvent(data: "kept")])
    }

    @Test func aLeadingByteOrderMarkIsSkippedOnce() throws {
        #expect(try events("\u{FEFF}data: a\n\n") == [ServerSentEvent(data: "a")])
    }

    @Test func anUnterminatedEventIsPendingNotDispatched() throws {
        var parser = ServerSentEventParser()
        #expect(try parser.parse(Array("data: [DONE]\n".utf8)).isEmpty)
        #expect(parser.hasPendingEvent)
        var partialLine = ServerSentEventParser()
        _ = try partialLine.parse(Array("data: [DO".utf8))
        #expect(partialLine.hasPendingEvent)
    }

    @Test func multiByteCharactersSurviveAnySplit() throws {
        let text = "data: {\"content\":\" naïve 日本 🙂\"}\n\n"
        for step in 1...5 {
            #expect(try events(text, splitEvery: step) == [ServerSentEvent(data: "{\"content\":\" naïve 日本 🙂\"}")])
        }
    }

    @Test func anEndlessLineIsRefused() throws {
        var parser = ServerSentEventParser(maximumEventBytes: 64)
        #expect(throws: ModelDepotError.self) { try parser.parse(Array(repeating: UInt8(ascii: "a"), count: 100)) }
        var manyLines = ServerSentEventParser(maximumEventBytes: 64)
        #expect(throws: ModelDepotError.self) {
            try manyLines.parse(Array(String(repeating: "data: 0123456789\n", count: 10).utf8))
        }
    }
}
