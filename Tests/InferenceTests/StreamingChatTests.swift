import Foundation
import ModelDepot
import ModelDepotInference
import ModelDepotTesting
import Testing

/// The streaming client against a scripted server: exact bytes, broken connections, server errors.
@Suite struct StreamingChatTests {
    @Test func crlfFramingMultiLineDataAndPingsMakeOneReply() async throws {
        let crlf = "\r\n"
        let server = try await ScriptedHTTPServer.start(replies: [
            .eventStream([
                .send(": ping - 2026-11-22 08:00:00\r\n\r\n"),
                .send(StreamEvents.role(crlf)),
                .send(StreamEvents.content("Hello", crlf)),
                // One JSON document spread over two data lines (joined with a newline, still valid JSON).
                .send("data: {\"choices\":[{\"index\":0,\r\ndata: \"delta\":{\"content\":\", world\"}}]}\r\n\r\n"),
                .send(": ping\r\n"),
                .send(StreamEvents.finish("stop", crlf)),
                .send("data: [DONE]\r\n\r\n"),
            ])
        ])
        let provider = try scriptedProvider(server)
        let (chunks, error) = await drain(provider.stream(messages: [.user("hi")], config: .precise))
        #expect(error == nil)
        #expect(chunks.map(\.text) == ["Hello", ", world", ""])
        #expect(chunks.map(\.tokenCount) == [1, 2, 2])
        #expect(chunks.last?.isComplete == true)
        #expect(chunks.last?.finishReason == .stop)
        #expect(chunks.dropLast().allSatisfy { !$0.isComplete })
        #expect(chunks.first?.timeToFirstToken != nil)
        try await server.shutdown()
    }

    @Test func theRequestCarriesTheConfigAndAsksForAStream() async throws {
        let server = try await ScriptedHTTPServer.start(replies: [
            .eventStream([
                .send(StreamEvents.content("x")), .send(StreamEvents.finish("length")), .send(StreamEvents.done),
            ])
        ])
        let provider = try scriptedProvider(server, credentials: .apiKey("sk-local"))
        let config = GenerationConfig.code.maxTokens(7).stopSequences(["\n\n"]).seed(42).frequencyPenalty(0.5)
        let generation = try await provider.stream(messages: [.system("be brief"), .user("hi")], config: config)
            .collect()
        #expect(generation.text == "x")
        #expect(generation.finishReason == .length)
        #expect(generation.isTruncated)

        let request = try #require(server.requests.first)
        #expect(request.method == "POST")
        #expect(request.path == "/v1/chat/completions")
        #expect(request.header("Authorization") == "Bearer sk-local")
        #expect(request.header("Accept") == "text/event-stream")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any])
        #expect(json["model"] as? String == "tiny")
        #expect(json["stream"] as? Bool == true)
        #expect(json["max_tokens"] as? Int == 7)
        #expect(json["stop"] as? [String] == ["\n\n"])
        #expect(json["seed"] as? Int == 42)
        #expect(json["temperature"] as? Double == 0.1)
        #expect(json["frequency_penalty"] as? Double == 0.5)
        #expect(json["presence_penalty"] == nil)
        #expect((json["stream_options"] as? [String: Any])?["include_usage"] as? Bool == true)
        let messages = try #require(json["messages"] as? [[String: String]])
        #expect(messages == [["role": "system", "content": "be brief"], ["role": "user", "content": "hi"]])
        try await server.shutdown()
    }

    @Test func usageFromTheServerReplacesTheEventCount() async throws {
        let server = try await ScriptedHTTPServer.start(replies: [
            .eventStream([
                .send(StreamEvents.content("two tokens")), .send(StreamEvents.finish("stop")),
                .send(StreamEvents.usage(prompt: 5, completion: 2)), .send(StreamEvents.done),
            ])
        ])
        let generation = try await scriptedProvider(server).stream("hi").collect()
        #expect(generation.tokenCount == 2)
        #expect(generation.usage == TokenUsage(promptTokens: 5, completionTokens: 2))
        try await server.shutdown()
    }

    @Test func endOfBodyBeforeDoneIsAnErrorThatKeepsTheText() async throws {
        let server = try await ScriptedHTTPServer.start(replies: [
            .eventStream([.send(StreamEvents.role()), .send(StreamEvents.content("partial"))])
        ])
        let (chunks, error) = await drain(try scriptedProvider(server).stream("hi"))
        #expect(chunks.map(\.text) == ["partial"])
        #expect(error?.code == .incompleteStream)
        #expect(server.requests.count == 1)
        try await server.shutdown()
    }

    @Test func anEmptyStreamIsIncompleteNotAnEmptyReply() async throws {
        // What llama.cpp's server does when the prompt plus max_tokens overflow the context.
        let server = try await ScriptedHTTPServer.start(replies: [.eventStream([])])
        let (chunks, error) = await drain(try scriptedProvider(server, attempts: 1).stream("hi"))
        #expect(chunks.isEmpty)
        #expect(error?.code == .incompleteStream)
        #expect(error?.message.contains("context") == true)
        try await server.shutdown()
    }

    @Test func aResetAfterTokensEndsTheStreamWithoutARetry() async throws {
        // The reset waits until both tokens were read: a RST can make the kernel drop bytes not yet read.
        let read = ScriptedHTTPServer.Gate()
        let server = try await ScriptedHTTPServer.start(replies: [
            .eventStream([.send(StreamEvents.content("one")), .send(StreamEvents.content(" two")), .wait(read), .reset]
            ),
            .eventStream([.send(StreamEvents.content("other")), .send(StreamEvents.done)]),
        ])
        var iterator = try scriptedProvider(server).stream("hi").makeAsyncIterator()
        #expect(try await iterator.next()?.text == "one")
        #expect(try await iterator.next()?.text == " two")
        read.open()
        do {
            let chunk = try await iterator.next()
            Issue.record("the stream went on after the reset: \(String(describing: chunk))")
        } catch let error as ModelDepotError {
            #expect(error.code == .network)
            #expect(error.isRetryable)
        }
        #expect(server.requests.count == 1)
        try await server.shutdown()
    }

    @Test func aFailureBeforeTheFirstTokenIsRetriedWithBackoff() async throws {
        let server = try await ScriptedHTTPServer.start(replies: [
            .eventStream([.send(StreamEvents.role()), .reset]),
            .json(#"{"error":{"message":"overloaded","type":"server_error"}}"#, status: 503),
            .eventStream([
                .send(StreamEvents.content("ok")), .send(StreamEvents.finish("stop")), .send(StreamEvents.done),
            ]),
        ])
        let clock = ImmediateClock()
        let (chunks, error) = await drain(try scriptedProvider(server, clock: clock).stream("hi"))
        #expect(error == nil)
        #expect(chunks.map(\.text) == ["ok", ""])
        #expect(server.requests.count == 3)
        #expect(clock.sleeps == [.milliseconds(100), .milliseconds(200)])
        try await server.shutdown()
    }

    @Test func rateLimitWaitsForRetryAfterOnTheClock() async throws {
        let server = try await ScriptedHTTPServer.start(replies: [
            .json(
                #"{"error":{"message":"slow down","type":"rate_limit_exceeded"}}"#, status: 429,
                headers: [("Retry-After", "7")]),
            .eventStream([.send(StreamEvents.content("ok")), .send(StreamEvents.done)]),
        ])
        let clock = ImmediateClock()
        let generation = try await scriptedProvider(server, clock: clock).stream("hi").collect()
        #expect(generation.text == "ok")
        #expect(clock.sleeps == [.seconds(7)])
        try await server.shutdown()
    }

    @Test func aRetryAfterBeyondTheLimitFailsWithTheWait() async throws {
        let server = try await ScriptedHTTPServer.start(replies: [
            .json(#"{"error":"Rate limit reached"}"#, status: 429, headers: [("Retry-After", "3600")])
        ])
        let (_, error) = await drain(try scriptedProvider(server).stream("hi"))
        #expect(error?.code == .rateLimited)
        #expect(error?.retryAfter == .seconds(3600))
        #expect(error?.isRetryable == true)
        #expect(error?.message.contains("Rate limit reached") == true)
        #expect(server.requests.count == 1)
        try await server.shutdown()
    }

    @Test func anErrorEventMidStreamEndsItWithTheServersMessage() async throws {
        let server = try await ScriptedHTTPServer.start(replies: [
            .eventStream([
                .send(StreamEvents.content("so far")),
                .send(#"data: {"error":{"message":"CUDA out of memory","type":"server_error","code":500}}"# + "\n\n"),
                .hang,
            ])
        ])
        let (chunks, error) = await drain(try scriptedProvider(server).stream("hi"))
        #expect(chunks.map(\.text) == ["so far"])
        #expect(error?.code == .serverError)
        #expect(error?.message.contains("CUDA out of memory") == true)
        // The hanging connection was dropped rather than left open.
        await server.waitForClosedConnections(1)
        try await server.shutdown()
    }

    @Test func anEventThatIsNotAChatChunkIsAProtocolError() async throws {
        let server = try await ScriptedHTTPServer.start(replies: [
            .eventStream([.send(StreamEvents.content("ok")), .send("data: <html>oops</html>\n\n"), .hang])
        ])
        let (chunks, error) = await drain(try scriptedProvider(server).stream("hi"))
        #expect(chunks.map(\.text) == ["ok"])
        #expect(error?.code == .protocolViolation)
        #expect(error?.message.contains("<html>oops</html>") == true)
        try await server.shutdown()
    }

    @Test func cancellingTheConsumerClosesTheConnectionPromptly() async throws {
        let server = try await ScriptedHTTPServer.start(replies: [
            .eventStream([.send(StreamEvents.role()), .send(StreamEvents.content("first")), .hang])
        ])
        let provider = try scriptedProvider(server)
        let received = AsyncStream<String>.makeStream()
        let consumer = Task { () -> (String, ModelDepotError?) in
            var reply = ""
            do {
                for try await chunk in provider.stream("tell me a long story") {
                    reply += chunk.text
                    received.continuation.yield(chunk.text)
                }
                return (reply, nil)
            } catch {
                return (reply, error as? ModelDepotError)
            }
        }
        var iterator = received.stream.makeAsyncIterator()
        #expect(await iterator.next() == "first")
        consumer.cancel()
        try await withTimeLimit { await server.waitForClosedConnections(1) }
        let (reply, error) = await consumer.value
        #expect(reply == "first")
        #expect(error?.code == .cancelled)
        #expect(server.requests.count == 1)
        try await server.shutdown()
    }

    @Test func leavingTheLoopEarlyClosesTheConnection() async throws {
        let server = try await ScriptedHTTPServer.start(replies: [
            .eventStream([.send(StreamEvents.content("first")), .hang])
        ])
        let provider = try scriptedProvider(server)
        for try await chunk in provider.stream("hi") {
            #expect(chunk.text == "first")
            break
        }
        try await withTimeLimit { await server.waitForClosedConnections(1) }
        try await server.shutdown()
    }

    @Test func aSlowStreamDeliversEachTokenAsItArrives() async throws {
        let gates = (0..<3).map { _ in ScriptedHTTPServer.Gate() }
        let server = try await ScriptedHTTPServer.start(replies: [
            .eventStream(
                gates.enumerated().flatMap { index, gate in [.wait(gate), .send(StreamEvents.content("t\(index)"))] }
                    + [.send(StreamEvents.done)])
        ])
        var iterator = try scriptedProvider(server).stream("hi").makeAsyncIterator()
        for (index, gate) in gates.enumerated() {
            // The next token is only sent once the gate opens: receiving it proves nothing is buffered.
            gate.open()
            let chunk = try await iterator.next()
            #expect(chunk?.text == "t\(index)")
            #expect(chunk?.tokenCount == index + 1)
            if index > 0 { #expect(chunk?.tokensPerSecond != nil) }
        }
        #expect(try await iterator.next()?.isComplete == true)
        #expect(try await iterator.next() == nil)
        try await server.shutdown()
    }
}
