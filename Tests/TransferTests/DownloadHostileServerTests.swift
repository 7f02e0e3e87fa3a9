import Foundation
import ModelDepot
import ModelDepotTesting
import Synchronization
import Testing

/// What the hostile-input probe found: expiring signed URLs, replies that are not HTTP, silent servers,
/// passwords in URLs, and debris after failures. Every case ends in the file or a clear error, and leaves no
/// empty partial file behind.
@Suite struct DownloadHostileServerTests {
    static let expired = """
        <?xml version="1.0" encoding="UTF-8"?>
        <Error><Code>AccessDenied</Code><Message>Request has expired</Message><Expires>2026-11-23T01:00:00Z</Expires></Error>
        """

    func downloader(_ clock: ImmediateClock = ImmediateClock(), stallTimeout: Duration? = nil) -> Downloader {
        var configuration = DownloadFixture.configuration()
        configuration.stallTimeout = stallTimeout
        return Downloader(clock: clock, configuration: configuration, logger: testLogger(), random: { 0.5 })
    }

    // MARK: 1. Signed URLs that expire mid-pull

    /// An origin that redirects every request to a signed URL on a "CDN" (another server), as the Hub does.
    struct SignedURLServers {
        let origin: FaultServer
        let cdn: FaultServer
        let folder: TemporaryDirectory

        static func with(_ bytes: [UInt8], _ body: (SignedURLServers) async throws -> Void) async throws {
            let cdn = try await FaultServer.start(files: ["/signed/blob": bytes])
            let origin = try await FaultServer.start(files: [:])
            origin.inject(.redirect(to: cdn.url("/signed/blob").absoluteString), times: 1000)
            let folder = try TemporaryDirectory()
            defer { folder.remove() }
            try await body(SignedURLServers(origin: origin, cdn: cdn, folder: folder))
            try await cdn.shutdown()
            try await origin.shutdown()
        }

        func request(sha256: String? = nil) -> DownloadRequest {
            DownloadRequest(
                url: origin.url("/resolve/main/weights.bin"), destination: folder.path("weights.bin"),
                expectedSHA256: sha256)
        }
    }

    @Test func anExpiredSignedURLIsReplacedAndTheSameRangesContinue() async throws {
        let bytes = SampleData.bytes(count: 3 << 20, seed: 9)
        try await SignedURLServers.with(bytes) { servers in
            // Twice, after the download is under way, the CDN says the signature expired (S3's 403).
            servers.cdn.inject(
                .status(403, headers: [("Content-Type", "application/xml")], body: Self.expired), times: 2,
                when: .laterRanges)
            let request = servers.request(sha256: SampleData.sha256(bytes))
            let result = try await downloader().download(request)
            #expect(try Data(contentsOf: request.destination) == Data(bytes))
            #expect(result.bytesReceived == Int64(bytes.count), "no byte was fetched twice")
            #expect(servers.cdn.pendingFaults == 0)
            #expect(servers.origin.requests.count >= 3, "the original URL was asked for a fresh one after each refusal")
        }
    }

    @Test func aCDNThatKeepsRefusingFailsClearlyAfterThreeFreshURLs() async throws {
        try await SignedURLServers.with(SampleData.bytes(count: 100_000, seed: 9)) { servers in
            servers.cdn.inject(.status(403, body: Self.expired), times: 1000)
            let request = servers.request()
            let error = await captureError { _ = try await downloader().download(request) }
            #expect(error?.code == .expiredURL)
            #expect(error?.message.contains("AccessDenied: Request has expired") == true, "\(error?.message ?? "")")
            #expect(error?.message.contains("3 fresh URLs") == true)
            #expect(servers.origin.requests.count == 4, "the first URL, then three fresh ones")
            #expect(!FileManager.default.fileExists(atPath: request.partialPath))
        }
    }

    @Test func aRefusalFromTheOriginItselfStaysAnAuthorizationError() async throws {
        let fixture = try await DownloadFixture.make(size: 10_000)
        defer { Task { await fixture.cleanUp() } }
        fixture.server.inject(.status(403, body: Self.expired), times: 10)
        let error = await captureError { _ = try await fixture.downloader().download(fixture.request()) }
        #expect(error?.code == .unauthorized)
        #expect(error?.message.contains("No credentials were sent") == true, "\(error?.message ?? "")")
        #expect(fixture.server.requests.count == 1)
    }

    // MARK: 4. Silent servers

    @Test func aServerThatAcceptsAndNeverAnswersFailsWithinTheRetryBudgetAndSaysSo() async throws {
        let silent = try await RawReplyServer.start(reply: nil)
        let folder = try TemporaryDirectory()
        defer {
            folder.remove()
            Task { try? await silent.shutdown() }
        }
        let clock = ImmediateClock()
        let waits = Mutex<[TransferWait]>([])
        let request = DownloadRequest(url: silent.url("/model.bin"), destination: folder.path("model.bin"))
        let error = await captureError {
            _ = try await downloader(clock, stallTimeout: .seconds(20)).download(request) { progress in
                if let wait = progress.waiting { waits.withLock { $0.append(wait) } }
            }
        }
        #expect(error?.code == .stalled)
        #expect(error?.message.contains("retry budget") == true, "\(error?.message ?? "")")
        let slept = clock.sleeps.reduce(Duration.zero, +)
        #expect(slept <= .seconds(90), "gave up within the budget, not after attempts × timeouts")
        let seen = waits.withLock { $0 }
        #expect(seen.filter { if case .retry = $0 { true } else { false } }.count >= 3, "\(seen)")
        #expect(seen.contains(.server("127.0.0.1:\(silent.baseURL.port!)")))
        let retry = seen.first { if case .retry = $0 { true } else { false } }
        #expect(retry?.description.hasPrefix("retrying in 0.2 s (attempt 2 of 6): No data arrived") == true, "\(seen)")
        #expect(!FileManager.default.fileExists(atPath: request.partialPath))
    }

    // MARK: 5. Errors that cannot heal

    @Test func aReplyThatIsNotHTTPFailsAtOnce() async throws {
        for reply in ["SSH-2.0-OpenSSH_9.6\r\n", "220 ftp.example.com FTP ready\r\n"] {
            let server = try await RawReplyServer.start(reply: Array(reply.utf8))
            let folder = try TemporaryDirectory()
            let request = DownloadRequest(url: server.url("/model.bin"), destination: folder.path("model.bin"))
            let clock = ImmediateClock()
            let error = await captureError { _ = try await downloader(clock).download(request) }
            #expect(error?.code == .protocolViolation, "\(reply)")
            #expect(error?.message.contains("did not answer with HTTP") == true, "\(error?.message ?? "")")
            #expect(server.acceptedConnections == 1 && clock.sleeps.isEmpty, "not retried")
            #expect(!FileManager.default.fileExists(atPath: request.partialPath))
            folder.remove()
            try await server.shutdown()
        }
    }

    @Test func headersPastEveryLimitFailAtOnce() async throws {
        let head =
            "HTTP/1.1 200 OK\r\n"
            + (0..<4000).map { "X-Filler-\($0): \(String(repeating: "a", count: 64))\r\n" }.joined()
        let server = try await RawReplyServer.start(reply: Array(head.utf8))
        let folder = try TemporaryDirectory()
        defer {
            folder.remove()
            Task { try? await server.shutdown() }
        }
        let clock = ImmediateClock()
        let request = DownloadRequest(url: server.url("/model.bin"), destination: folder.path("model.bin"))
        let error = await captureError { _ = try await downloader(clock).download(request) }
        #expect(error?.code == .protocolViolation)
        #expect(error?.message.contains("headers larger than") == true, "\(error?.message ?? "")")
        #expect(server.acceptedConnections == 1 && clock.sleeps.isEmpty)
    }

    @Test func aRefusedConnectionIsRetriedWithAReadableMessage() async throws {
        let port = try unusedLoopbackPort()
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let clock = ImmediateClock()
        let request = DownloadRequest(
            url: URL(string: "http://127.0.0.1:\(port)/model.bin")!, destination: folder.path("model.bin"))
        let error = await captureError { _ = try await downloader(clock).download(request) }
        #expect(error?.code == .network)
        #expect(
            error?.message.hasPrefix(
                "Nothing answers at 127.0.0.1:\(port) (connection refused); is the server running?")
                == true, "\(error?.message ?? "")")
        #expect(clock.sleeps.count == 5, "retried up to the attempt limit")
        #expect(!FileManager.default.fileExists(atPath: request.partialPath))
    }

    // MARK: 6. Passwords in URLs

    @Test func aPasswordInTheURLIsSentAsBasicCredentialsAndNeverStoredOrShown() async throws {
        let fixture = try await DownloadFixture.make(size: 2 << 20)
        defer { Task { await fixture.cleanUp() } }
        var components = URLComponents(url: fixture.url, resolvingAgainstBaseURL: false)!
        components.user = "user"
        components.password = "s3cretPW"
        let request = DownloadRequest(url: components.url!, destination: fixture.destination)
        #expect(!request.url.absoluteString.contains("s3cretPW"))
        fixture.server.inject(.throttle(bytesPerSecond: 512 << 10), times: 1000)
        let task = fixture.downloader(clock: ContinuousClock()).start(request)
        // Paused once bytes are on disk: a run stopped before its first byte leaves nothing to resume.
        #expect(await waitUntil { Downloader().resumableBytes(for: request) > 0 })
        await task.pause()
        let record = try String(contentsOfFile: request.resumeRecordPath, encoding: .utf8)
        #expect(!record.contains("s3cretPW") && !record.contains("user:"))
        #expect(try Self.permissions(request.resumeRecordPath) == 0o600)
        #expect(try Self.permissions(request.partialPath) == 0o600)
        fixture.server.clearFaults()
        task.resume()
        _ = try await task.result()
        let sent = fixture.server.requests.compactMap { $0.header("Authorization") }
        #expect(!sent.isEmpty && sent.allSatisfy { $0 == "Basic " + Data("user:s3cretPW".utf8).base64EncodedString() })
        #expect(try Self.permissions(fixture.destination.path) & 0o044 != 0, "the finished file is readable as usual")

        let missing = DownloadRequest(
            url: URL(string: components.url!.absoluteString.replacingOccurrences(of: "model.bin", with: "nope"))!,
            destination: fixture.folder.path("nope"))
        let error = await captureError { _ = try await fixture.downloader().download(missing) }
        #expect(error?.code == .notFound)
        #expect(error.map { !"\($0)".contains("s3cretPW") } == true)
    }

    static func permissions(_ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }

    // MARK: 7. Nothing left behind when nothing was written

    @Test func permanentFailuresLeaveNoEmptyPartialFile() async throws {
        let cases: [(String, [Fault])] = [
            ("404", [.status(404)]), ("401", [.status(401)]), ("500", Array(repeating: .status(500), count: 10)),
            ("redirect loop", Array(repeating: .redirect(to: "/model.bin"), count: 20)),
            ("file redirect", [.redirect(to: "file:///etc/passwd")]),
            ("ftp redirect", [.redirect(to: "ftp://127.0.0.1/model.bin")]),
        ]
        for (name, faults) in cases {
            let fixture = try await DownloadFixture.make(size: 10_000)
            for fault in faults { fixture.server.inject(fault) }
            let request = fixture.request()
            let error = await captureError { _ = try await fixture.downloader().download(request) }
            #expect(error != nil, "\(name)")
            let left = try FileManager.default.contentsOfDirectory(atPath: fixture.folder.url.path)
            #expect(left.isEmpty, "\(name) left \(left)")
            await fixture.cleanUp()
        }
    }

    @Test func aBadContentRangeLeavesNoEmptyPartialFile() async throws {
        let server = try await ScriptedHTTPServer.start(replies: [
            ScriptedHTTPServer.Reply(
                status: 206, headers: [("Content-Range", "bytes nonsense"), ("Content-Length", "4")],
                steps: [.send("abcd")])
        ])
        let folder = try TemporaryDirectory()
        defer {
            folder.remove()
            Task { try? await server.shutdown() }
        }
        let request = DownloadRequest(
            url: server.baseURL.appendingPathComponent("model.bin"), destination: folder.path("model.bin"))
        let error = await captureError { _ = try await downloader().download(request) }
        #expect(error?.code == .protocolViolation)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path).isEmpty)
    }
}
