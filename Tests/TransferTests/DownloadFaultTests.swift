import Foundation
import ModelDepot
import ModelDepotTesting
import Synchronization
import Testing

/// The engine against a server that misbehaves: every case ends in the right bytes or a clear error,
/// never a wrong file at the destination.
@Suite struct DownloadFaultTests {
    @Test func resetsAtRandomOffsetsAreRetriedFromWhereTheyStopped() async throws {
        let fixture = try await DownloadFixture.make()
        defer { Task { await fixture.cleanUp() } }
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<6 {
            fixture.server.inject(.reset(afterBytes: Int.random(in: 1..<200_000, using: &generator)))
        }
        let result = try await fixture.downloader().download(fixture.request(sha256: fixture.sha256))
        #expect(try fixture.destinationBytes() == fixture.bytes)
        #expect(fixture.server.pendingFaults == 0)
        // Retries continue from the last written byte: the total transferred stays close to the file size.
        #expect(result.bytesReceived == Int64(fixture.bytes.count))
        #expect(fixture.server.bodyBytesSent < Int64(fixture.bytes.count) + 6 * 200_000 + 4 * (256 << 10))
    }

    @Test func truncatedBodiesAreCompleted() async throws {
        let fixture = try await DownloadFixture.make()
        defer { Task { await fixture.cleanUp() } }
        fixture.server.inject(.truncate(afterBytes: 1000), times: 4)
        _ = try await fixture.downloader().download(fixture.request(sha256: fixture.sha256))
        #expect(try fixture.destinationBytes() == fixture.bytes)
        #expect(fixture.server.pendingFaults == 0)
    }

    @Test func aBurstOf5xxIsRetriedWithGrowingBackoff() async throws {
        let fixture = try await DownloadFixture.make(size: 100_000)
        defer { Task { await fixture.cleanUp() } }
        fixture.server.inject(.status(503), times: 2)
        fixture.server.inject(.status(500), times: 1)
        _ = try await fixture.downloader().download(fixture.request(sha256: fixture.sha256))
        #expect(try fixture.destinationBytes() == fixture.bytes)
        // random() is 0.5 and jitter 0.5: 250 ms × 2^n × 0.75.
        #expect(fixture.clock.sleeps == [.milliseconds(188), .milliseconds(375), .milliseconds(750)])
    }

    @Test func rateLimitHonoursRetryAfter() async throws {
        let fixture = try await DownloadFixture.make(size: 100_000)
        defer { Task { await fixture.cleanUp() } }
        fixture.server.inject(.status(429, headers: [("Retry-After", "7")]))
        _ = try await fixture.downloader().download(fixture.request(sha256: fixture.sha256))
        // The server's 7 s, and at most a tenth more: clients turned away together do not return together.
        #expect(
            fixture.clock.sleeps.count == 1 && (.seconds(7)...(.milliseconds(7700))).contains(fixture.clock.sleeps[0]))
        #expect(try fixture.destinationBytes() == fixture.bytes)
    }

    @Test func aRetryAfterBeyondTheLimitFailsWithTheServersTime() async throws {
        let fixture = try await DownloadFixture.make(size: 100_000)
        defer { Task { await fixture.cleanUp() } }
        fixture.server.inject(.status(429, headers: [("Retry-After", "3600")]))
        let error = await captureError { _ = try await fixture.downloader().download(fixture.request()) }
        #expect(error?.code == .rateLimited)
        #expect(error?.retryAfter == .seconds(3600))
        #expect(fixture.clock.sleeps.isEmpty)
    }

    @Test func persistent5xxGivesUpAfterTheRetryLimit() async throws {
        let fixture = try await DownloadFixture.make(size: 100_000)
        defer { Task { await fixture.cleanUp() } }
        fixture.server.inject(.status(502), times: 100)
        let error = await captureError { _ = try await fixture.downloader().download(fixture.request()) }
        #expect(error?.code == .serverError)
        #expect(error?.isRetryable == true)
        #expect(fixture.server.requests.count == 6)
        #expect(!FileManager.default.fileExists(atPath: fixture.destination.path))
    }

    @Test func permanentClientErrorsFailAtOnce() async throws {
        for (status, code) in [
            (404, ModelDepotError.Code.notFound), (401, .unauthorized), (403, .unauthorized), (400, .httpStatus),
        ] {
            let fixture = try await DownloadFixture.make(size: 10_000)
            fixture.server.inject(.status(status))
            let error = await captureError { _ = try await fixture.downloader().download(fixture.request()) }
            #expect(error?.code == code, "HTTP \(status)")
            #expect(fixture.server.requests.count == 1, "HTTP \(status) must not be retried")
            #expect(fixture.clock.sleeps.isEmpty)
            await fixture.cleanUp()
        }
    }

    @Test func wrongBytesFailTheChecksumAndLeaveNothingBehind() async throws {
        let fixture = try await DownloadFixture.make()
        defer { Task { await fixture.cleanUp() } }
        fixture.server.inject(.corrupt(atBodyOffset: 1234), when: .laterRanges)
        let error = await captureError {
            _ = try await fixture.downloader().download(fixture.request(sha256: fixture.sha256))
        }
        #expect(error?.code == .checksumMismatch)
        #expect(error?.message.contains(fixture.sha256) == true)
        #expect(!FileManager.default.fileExists(atPath: fixture.destination.path))
        #expect(!FileManager.default.fileExists(atPath: fixture.request().partialPath))
        #expect(!FileManager.default.fileExists(atPath: fixture.request().resumeRecordPath))
    }

    @Test func aFileThatChangesMidDownloadIsRestartedNeverMixed() async throws {
        let fixture = try await DownloadFixture.make()
        defer { Task { await fixture.cleanUp() } }
        let newContent = SampleData.bytes(count: fixture.bytes.count, seed: 99)
        fixture.server.inject(.replaceContent(newContent), when: .rangeStarting(at: 1 << 20))
        let result = try await fixture.downloader().download(fixture.request())
        #expect(try fixture.destinationBytes() == newContent)
        #expect(result.sha256 == SampleData.sha256(newContent))
    }

    @Test func aServerThatIgnoresRangesGetsOneCleanStream() async throws {
        var options = FaultServer.Options()
        options.supportsRanges = false
        let fixture = try await DownloadFixture.make(options: options)
        defer { Task { await fixture.cleanUp() } }
        let result = try await fixture.downloader().download(fixture.request(sha256: fixture.sha256))
        #expect(try fixture.destinationBytes() == fixture.bytes)
        #expect(result.sha256 == fixture.sha256)
        #expect(fixture.server.requests.count == 1)
    }

    @Test func aTwoHundredToOneLaterRangeRestartsCleanly() async throws {
        let fixture = try await DownloadFixture.make()
        defer { Task { await fixture.cleanUp() } }
        fixture.server.inject(.ignoreRange, when: .laterRanges)
        _ = try await fixture.downloader().download(fixture.request(sha256: fixture.sha256))
        #expect(try fixture.destinationBytes() == fixture.bytes)
    }

    @Test func noContentLengthStillDownloadsEveryByte() async throws {
        var options = FaultServer.Options()
        options.supportsRanges = false
        options.sendsContentLength = false
        let fixture = try await DownloadFixture.make(options: options)
        defer { Task { await fixture.cleanUp() } }
        let result = try await fixture.downloader().download(fixture.request(sha256: fixture.sha256))
        #expect(try fixture.destinationBytes() == fixture.bytes)
        #expect(result.size == Int64(fixture.bytes.count))
    }

    @Test func aSingleStreamCutShortIsRetriedFromZero() async throws {
        var options = FaultServer.Options()
        options.supportsRanges = false
        let fixture = try await DownloadFixture.make(options: options)
        defer { Task { await fixture.cleanUp() } }
        fixture.server.inject(.reset(afterBytes: 500_000))
        _ = try await fixture.downloader().download(fixture.request(sha256: fixture.sha256))
        #expect(try fixture.destinationBytes() == fixture.bytes)
        #expect(fixture.server.requests.count == 2)
    }

    @Test func aSlowTailIsStolenByIdleConnections() async throws {
        let fixture = try await DownloadFixture.make(size: 2 << 20)
        defer { Task { await fixture.cleanUp() } }
        // The last segment crawls at 64 KiB/s: 256 KiB would take 4 s alone.
        fixture.server.inject(.throttle(bytesPerSecond: 64 << 10), when: .rangeStarting(at: 7 * (256 << 10)))
        // Stealing judges each connection's pace, so this test needs a clock that moves.
        _ = try await fixture.downloader(clock: ContinuousClock()).download(fixture.request(sha256: fixture.sha256))
        #expect(try fixture.destinationBytes() == fixture.bytes)
        let stolen = fixture.server.requests.compactMap(\.rangeStart).filter { $0 > 7 * (256 << 10) }
        #expect(!stolen.isEmpty, "idle connections should have taken over part of the slow range")
    }

    @Test func aStalledConnectionIsDroppedAfterTheStallTimeout() async throws {
        let fixture = try await DownloadFixture.make(size: 100_000)
        defer { Task { await fixture.cleanUp() } }
        fixture.server.inject(.stall(afterBytes: 10_000))
        let clock = TestClock()
        var configuration = DownloadFixture.configuration()
        configuration.stallTimeout = .seconds(30)
        // No retry budget: the clock below jumps 16 s at a time, so a few retries that see it jump before their
        // bytes arrive would use up 90 s of budget in no real time.
        configuration.retryPolicy = RetryPolicy(maxAttempts: 50, baseDelay: .seconds(1), jitter: 0, budget: nil)
        let downloader = fixture.downloader(configuration, clock: clock)
        let request = fixture.request(sha256: fixture.sha256)
        let phases = Mutex<[String]>([])
        let download = Task {
            try await downloader.download(request) { progress in
                phases.withLock {
                    $0.append("\(progress.phase) \(progress.bytesCompleted) \(progress.waiting.map { "\($0)" } ?? "")")
                }
            }
        }
        // Move time in two phases, watching the download's own events. Until it reports the retry, jump 16 s at
        // a time once the stalled answer's bytes are out (the first request waits for its answer under the
        // watchdog too: moving time earlier could time it out before the stall). Then only nudge the back-off,
        // a second at a time and a few times at most: the retry's own watchdog is already running, and jumps of
        // 16 s would drop it as stalled before a loaded machine delivers its bytes.
        let nudges = Mutex(0)
        let finished = await waitUntil {
            let retrying = phases.withLock { $0.contains { $0.contains("retrying in") } }
            if !retrying {
                if fixture.server.bodyBytesSent >= 10_000, clock.sleeperCount > 0 { clock.advance(by: .seconds(16)) }
            } else if fixture.server.requests.count == 1, clock.sleeperCount > 0,
                nudges.withLock({ count in
                    defer { count += 1 }
                    return count < 5
                })
            {
                clock.advance(by: .seconds(1))
            }
            return FileManager.default.fileExists(atPath: fixture.destination.path)
        }
        #expect(
            finished,
            "requests \(fixture.server.requests.count), body bytes sent \(fixture.server.bodyBytesSent), sleepers \(clock.sleeperCount)"
        )
        guard finished else {
            // Not waiting for a download that did not finish: this test has failed above, and the run goes on.
            download.cancel()
            Issue.record("last events: \(phases.withLock { $0.suffix(6) })")
            return
        }
        let result = try await download.value
        #expect(result.sha256 == fixture.sha256)
        // The stalled request was dropped and retried, and the retry continued where the received bytes
        // stopped: no byte was fetched twice (where exactly it stopped depends on how much the client had read).
        #expect(fixture.server.requests.count >= 2)
        #expect(result.bytesReceived == Int64(fixture.bytes.count), "the retry continues after the bytes received")
    }
}

/// The transport's own idle-read timer guards requests whose caller does not watch for stalls (API calls).
@Suite struct AsyncHTTPTransportTimeoutTests {
    @Test func aSilentServerEndsAnUnwatchedRequestAfterTheReadTimeout() async throws {
        let fixture = try await DownloadFixture.make(size: 100_000)
        defer { Task { await fixture.cleanUp() } }
        fixture.server.inject(.stall(afterBytes: 10_000))
        var configuration = AsyncHTTPTransport.Configuration()
        configuration.readTimeout = .milliseconds(200)
        let transport = AsyncHTTPTransport(configuration: configuration)
        // The transport is shut down whatever happens: a client dropped without it traps in debug builds and
        // takes the whole test run down.
        let outcome: Result<Int, any Error>
        do {
            outcome = .success(
                try await withTimeLimit(90) {
                    let response = try await transport.send(TransportRequest(url: fixture.url))
                    var count = 0
                    do {
                        for try await chunk in response.body { count += chunk.count }
                        Issue.record("the body ended although the server stalled")
                    } catch {}
                    return count
                })
        } catch {
            outcome = .failure(error)
        }
        try await transport.shutdown()
        #expect(try outcome.get() == 10_000)
    }
}
