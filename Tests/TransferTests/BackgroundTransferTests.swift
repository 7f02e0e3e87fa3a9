import Foundation
import ModelDepot
import ModelDepotTesting
import Testing

/// A stand-in for iOS's background URLSession: it takes the requests the app hands it, fetches them over real HTTP
/// into files of its own (as the system does), and keeps each finished task's answer until the app is there to hear
/// it — through the same calls the URLSession delegate makes (`didFinishDownloadingTo`, `didCompleteWithError`).
///
/// It behaves as Apple documents a background session, not as the code under test expects:
/// 1. Redirects are always followed, and the delegate sees only the last response (NSURLSession.h, on
///    `URLSession:task:willPerformHTTPRedirection:newRequest:completionHandler:`: "For tasks in background sessions,
///    redirections will always be followed and this method will not be called."; `URLSessionTask.response` is the
///    final one).
/// 2. The headers the app set travel with every redirect, to whichever host: NSURLSession.h promises nothing else,
///    so the simulation assumes the worst.
/// 3. An HTTP error status is no error: its body is delivered to `didFinishDownloadingTo` like any other, and
///    `didCompleteWithError` gets nil (`urlSession(_:task:didCompleteWithError:)`'s documentation: "Server errors
///    are not reported through the error parameter. The only errors your delegate receives through the error
///    parameter are client-side errors").
/// 4. Task identifiers are unique within the session (NSURLSession.h, `taskIdentifier`: "an identifier for this
///    task, assigned by and unique to the owning session"), and survive a relaunch of the app.
final class SimulatedBackgroundService: @unchecked Sendable {
    struct Finished {
        var task: Int
        var status: Int
        var headers: [String: String]
        var location: URL
    }

    let folder: URL
    private var nextTask = 1
    private var requests: [Int: BackgroundTransfer.PieceRequest] = [:]
    private(set) var delivered: [Finished] = []

    init(folder: URL) { self.folder = folder }

    /// Takes a request and returns its task identifier.
    func start(_ request: BackgroundTransfer.PieceRequest) -> Int {
        defer { nextTask += 1 }
        requests[nextTask] = request
        return nextTask
    }

    /// Runs task `task` to its end while the app may be gone: the body lands in a file of the service's, whatever
    /// the status, after every redirect (rules 1–3).
    func run(_ task: Int) async throws -> Finished {
        let taken = requests.removeValue(forKey: task)
        let request = try #require(taken, "task \(task) was never started")
        var url = request.url
        var response = try await AsyncHTTPTransport.patient.send(
            TransportRequest(url: url, headers: request.headers.map { ($0.key, $0.value) }))
        var redirects = 0
        while (300..<400).contains(response.status), let location = response.header("Location"), redirects < 16 {
            for try await _ in response.body {}
            url = try #require(URL(string: location, relativeTo: url)?.absoluteURL)
            response = try await AsyncHTTPTransport.patient.send(
                TransportRequest(url: url, headers: request.headers.map { ($0.key, $0.value) }))
            redirects += 1
        }
        let body = try await response.body.collect(limit: 64 << 20, from: request.url)
        let location = folder.appendingPathComponent("CFNetworkDownload_\(task).tmp")
        try Data(body).write(to: location)
        var headers: [String: String] = [:]
        for header in response.headers { headers[header.name] = header.value }
        return Finished(task: task, status: response.status, headers: headers, location: location)
    }

    /// Hands every request of `transfer` not yet out to the service and records the task identifiers.
    func startAll(_ transfer: inout BackgroundTransfer) {
        for request in transfer.requestsToStart() {
            transfer.assign(task: start(request), to: request.piece)
        }
    }
}

@Suite struct BackgroundTransferTests {
    struct Setup {
        let fixture: DownloadFixture
        let service: SimulatedBackgroundService
        let etag: String

        func plan(pieceSize: Int64 = 256 << 10) -> BackgroundTransfer {
            BackgroundTransfer(
                url: fixture.url, destination: fixture.destination, size: Int64(fixture.bytes.count),
                sha256: fixture.sha256, etag: etag, pieceSize: pieceSize)
        }
    }

    static func setUp(size: Int = 1 << 20) async throws -> Setup {
        let fixture = try await DownloadFixture.make(size: size, seed: 21)
        let head = try await AsyncHTTPTransport.patient.send(TransportRequest(method: "HEAD", url: fixture.url))
        let etag = try #require(head.header("ETag"))
        let serviceFolder = fixture.folder.path("service")
        try FileManager.default.createDirectory(at: serviceFolder, withIntermediateDirectories: true)
        return Setup(fixture: fixture, service: SimulatedBackgroundService(folder: serviceFolder), etag: etag)
    }

    @Test func piecesFinishedWhileTheAppWasGoneAreSplicedAfterARelaunch() async throws {
        let setup = try await Self.setUp()
        defer { Task { await setup.fixture.cleanUp() } }
        // Launch 1: four pieces handed to the system, the record saved; then the app is killed.
        var first = setup.plan()
        setup.service.startAll(&first)
        #expect(first.tasksOut == [1, 2, 3, 4])
        try first.save()

        // While the app is gone the system finishes tasks 1, 3 and 4; task 2 fails.
        let one = try await setup.service.run(1)
        let three = try await setup.service.run(3)
        let four = try await setup.service.run(4)

        // Launch 2: the record says which tasks are out; the system delivers what finished meanwhile.
        var transfer = try #require(try BackgroundTransfer.load(for: setup.fixture.destination))
        #expect(transfer.tasksOut == [1, 2, 3, 4] && transfer.bytesDone == 0)
        for finished in [one, three, four] {
            let outcome = try transfer.finished(
                task: finished.task, status: finished.status, headers: finished.headers, location: finished.location)
            #expect(outcome == .spliced(transfer.pieces[finished.task - 1].range), "task \(finished.task)")
        }
        // The same completion delivered twice (a relaunch replaying events) changes nothing.
        #expect(
            try transfer.finished(task: 4, status: four.status, headers: four.headers, location: four.location)
                == .duplicate)
        transfer.failed(task: 2)
        #expect(transfer.bytesDone == 3 * (256 << 10) && !transfer.isComplete)
        try transfer.save()

        // The failed piece is asked for again and the file finishes, byte-exact, verified.
        setup.service.startAll(&transfer)
        #expect(transfer.tasksOut == [5])
        let five = try await setup.service.run(5)
        #expect(
            try transfer.finished(task: 5, status: five.status, headers: five.headers, location: five.location)
                == .spliced(256 << 10..<512 << 10))
        let placed = try transfer.finish()
        #expect(try Data(contentsOf: placed) == Data(setup.fixture.bytes))
        #expect(!FileManager.default.fileExists(atPath: transfer.recordFile.path))
        #expect(!FileManager.default.fileExists(atPath: transfer.partialFile.path))
    }

    /// The Hub answers a file's resolve URL with a redirect to its CDN, whose ETag is its own (quoted, and not the
    /// Hub metadata's): every piece must still be spliced, each range fetched once.
    @Test func piecesRedirectedToACDNWithItsOwnETagAreSpliced() async throws {
        let setup = try await Self.setUp()
        defer { Task { await setup.fixture.cleanUp() } }
        let hub = try await FaultServer.start(files: [:])
        defer { Task { try? await hub.shutdown() } }
        hub.inject(.redirect(to: setup.fixture.url.absoluteString), times: 100)
        var transfer = BackgroundTransfer(
            url: hub.url("/acme/tiny/resolve/main/model.bin"), destination: setup.fixture.destination,
            size: Int64(setup.fixture.bytes.count), sha256: setup.fixture.sha256, etag: setup.fixture.sha256,
            pieceSize: 256 << 10)
        setup.service.startAll(&transfer)
        for task in transfer.tasksOut {
            let finished = try await setup.service.run(task)
            let outcome = try transfer.finished(
                task: task, status: finished.status, headers: finished.headers, location: finished.location)
            guard case .spliced = outcome else {
                Issue.record("task \(task): \(outcome)")
                return
            }
        }
        #expect(try Data(contentsOf: try transfer.finish()) == Data(setup.fixture.bytes))
        #expect(setup.fixture.server.requests.count == 4, "each range once from the CDN")
    }

    @Test func aWholeFileWhereAPieceWasAskedIsRefused() async throws {
        let setup = try await Self.setUp()
        defer { Task { await setup.fixture.cleanUp() } }
        var transfer = setup.plan()
        setup.service.startAll(&transfer)
        setup.fixture.server.inject(.ignoreRange)
        let whole = try await setup.service.run(2)
        #expect(whole.status == 200)
        let outcome = try transfer.finished(
            task: 2, status: whole.status, headers: whole.headers, location: whole.location)
        guard case .refused(let reason) = outcome else {
            Issue.record("\(outcome)")
            return
        }
        #expect(reason.contains("answered 200"))
        #expect(transfer.bytesDone == 0 && !FileManager.default.fileExists(atPath: transfer.partialFile.path))
        #expect(transfer.requestsToStart().map(\.piece) == [1], "the refused piece is asked for again")
    }

    @Test func aChangedFileRestartsTheTransfer() async throws {
        let setup = try await Self.setUp()
        defer { Task { await setup.fixture.cleanUp() } }
        var transfer = setup.plan()
        setup.service.startAll(&transfer)
        let one = try await setup.service.run(1)
        _ = try transfer.finished(task: 1, status: one.status, headers: one.headers, location: one.location)
        #expect(transfer.bytesDone == 256 << 10)
        // Upstream replaces the file: its ETag changes, and If-Range makes the server send all of the new one.
        setup.fixture.server.inject(.replaceContent(SampleData.bytes(count: 1 << 20, seed: 99)))
        let two = try await setup.service.run(2)
        let outcome = try transfer.finished(task: 2, status: two.status, headers: two.headers, location: two.location)
        guard case .restarted = outcome else {
            Issue.record("\(outcome)")
            return
        }
        #expect(transfer.bytesDone == 0 && transfer.tasksOut.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: transfer.partialFile.path), "nothing of the old file is kept")
        // Tasks still out from before are unknown now: their answers are ignored.
        let three = try await setup.service.run(3)
        #expect(
            try transfer.finished(task: 3, status: three.status, headers: three.headers, location: three.location)
                == .duplicate)
    }

    @Test func aCorruptPieceIsNeverPlaced() async throws {
        let setup = try await Self.setUp()
        defer { Task { await setup.fixture.cleanUp() } }
        var transfer = setup.plan()
        setup.service.startAll(&transfer)
        // A piece cut short is refused outright.
        let one = try await setup.service.run(1)
        let short = setup.service.folder.appendingPathComponent("short.tmp")
        try Data(try Data(contentsOf: one.location).prefix(1000)).write(to: short)
        let outcome = try transfer.finished(task: 1, status: one.status, headers: one.headers, location: short)
        #expect(outcome == .refused("the piece holds 1000 bytes, not the 262144 asked for"))
        // A piece with a flipped byte has the right shape and is written; the file's hash catches it and nothing is
        // placed at the destination: every piece is asked for again.
        setup.fixture.server.inject(.corrupt(atBodyOffset: 5))
        setup.service.startAll(&transfer)
        for task in transfer.tasksOut {
            let finished = try await setup.service.run(task)
            _ = try transfer.finished(
                task: task, status: finished.status, headers: finished.headers, location: finished.location)
        }
        #expect(transfer.isComplete)
        #expect(throws: ModelDepotError.self) { _ = try transfer.finish() }
        #expect(!FileManager.default.fileExists(atPath: setup.fixture.destination.path))
        #expect(transfer.bytesDone == 0 && transfer.requestsToStart().count == 4)
    }
}
