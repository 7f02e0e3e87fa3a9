import Foundation
import ModelDepot
import ModelDepotTesting
import Synchronization
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
/// 5. A task does not start before its `earliestBeginDate` (NSURLSession.h: "Start the network load for this task
///    no earlier than the specified date. [...] Only applies to tasks created from background NSURLSession
///    instances.").
/// 6. A cancelled task still ends with `didCompleteWithError`, its error NSURLErrorCancelled (NSURLSession.h,
///    `-cancel`: "The task will signal -URLSession:task:didCompleteWithError: with an error value of
///    { NSURLErrorDomain, NSURLErrorCancelled }"), later, on the delegate queue.
/// 7. A created task does nothing until it is resumed (NSURLSession.h: "Newly-initialized tasks begin in a
///    suspended state, so you need to call this method to start the task").
final class SimulatedBackgroundService: BackgroundTaskSystem, @unchecked Sendable {
    struct Finished {
        var task: Int
        var status: Int
        var headers: [String: String]
        var location: URL
    }

    let folder: URL
    private let lock = NSLock()
    private var nextTask = 1
    private var requests: [Int: BackgroundTransfer.PieceRequest] = [:]
    private var resumed: Set<Int> = []
    /// Cancelled tasks whose `didCompleteWithError` (NSURLErrorCancelled) is not delivered yet.
    private(set) var cancelledPending: [Int] = []
    private(set) var cancelled: [Int] = []
    /// The simulated time, for `earliestBeginDate`.
    let clock = Mutex(Date(timeIntervalSince1970: 1_800_000_000))

    init(folder: URL) { self.folder = folder }

    var now: Date { clock.withLock { $0 } }
    func advance(by seconds: TimeInterval) { clock.withLock { $0 += seconds } }

    /// Takes a request and returns its task identifier.
    func start(_ request: BackgroundTransfer.PieceRequest) -> Int {
        lock.withLock {
            defer { nextTask += 1 }
            requests[nextTask] = request
            resumed.insert(nextTask)
            return nextTask
        }
    }

    func makeTask(_ request: BackgroundTransfer.PieceRequest) -> Int {
        lock.withLock {
            defer { nextTask += 1 }
            requests[nextTask] = request
            return nextTask
        }
    }

    func resume(_ task: Int) { lock.withLock { _ = resumed.insert(task) } }

    func cancel(_ task: Int) {
        lock.withLock {
            guard requests.removeValue(forKey: task) != nil else { return }
            cancelled.append(task)
            cancelledPending.append(task)
        }
    }

    /// Tasks made and still waiting for `resume()`.
    var unresumed: [Int] { lock.withLock { requests.keys.filter { !resumed.contains($0) }.sorted() } }

    /// The tasks the session has (`getAllTasks`): made, neither finished nor cancelled.
    var tasks: [Int] { lock.withLock { requests.keys.sorted() } }
    /// The request of a task not yet run.
    func request(of task: Int) -> BackgroundTransfer.PieceRequest? { lock.withLock { requests[task] } }
    /// Loses a task, as when the person force-quits the app.
    func lose(_ task: Int) { lock.withLock { _ = requests.removeValue(forKey: task) } }
    /// Adds a task the app's records never heard of.
    func stray() -> Int {
        start(.init(piece: 0, url: folder, headers: [:], expectedBytes: 0))
    }

    /// Runs task `task` and delivers what the delegate hears to `state`: `didFinishDownloadingTo`, then
    /// `didCompleteWithError(nil)` (rule 3).
    func deliver(_ task: Int, to state: BackgroundSessionState) async throws {
        let finished = try await run(task)
        state.didFinishDownloading(
            task: task, status: finished.status, headers: finished.headers, location: finished.location)
        try? FileManager.default.removeItem(at: finished.location)
        state.didComplete(task: task, error: nil)
    }

    /// Fails task `task` on the client side (a lost connection), offering `resumeData`.
    func fail(_ task: Int, resumeData: Data?, to state: BackgroundSessionState) {
        lock.withLock { _ = requests.removeValue(forKey: task) }
        state.didComplete(task: task, error: (reason: "The network connection was lost.", resumeData: resumeData))
    }

    /// Delivers the cancelled tasks' `didCompleteWithError(NSURLErrorCancelled)` (rule 6).
    func deliverCancellations(to state: BackgroundSessionState) {
        let pending = lock.withLock {
            defer { cancelledPending.removeAll() }
            return cancelledPending
        }
        for task in pending { state.didComplete(task: task, error: (reason: "cancelled", resumeData: nil)) }
    }

    /// Runs every task that may run now (resumed, past its `earliestBeginDate`) to `state`, until none is left.
    func deliverAll(to state: BackgroundSessionState) async throws {
        while let task = lock.withLock({
            requests.keys.sorted().first { resumed.contains($0) && (requests[$0]?.notBefore ?? .distantPast) <= now }
        }) {
            try await deliver(task, to: state)
            deliverCancellations(to: state)
        }
    }

    /// Runs task `task` to its end while the app may be gone: the body lands in a file of the service's, whatever
    /// the status, after every redirect (rules 1–3).
    func run(_ task: Int) async throws -> Finished {
        let (taken, running) = lock.withLock { (requests.removeValue(forKey: task), resumed.contains(task)) }
        let request = try #require(taken, "task \(task) was never started, or was cancelled")
        try #require(running, "task \(task) was never resumed (rule 7)")
        try #require(
            (request.notBefore ?? .distantPast) <= now, "task \(task) ran before its earliestBeginDate (rule 5)")
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

        func plan(pieceSize: Int64 = 256 << 10) -> BackgroundTransfer {
            BackgroundTransfer(
                url: fixture.url, destination: fixture.destination, size: Int64(fixture.bytes.count),
                sha256: fixture.sha256, pieceSize: pieceSize)
        }
    }

    static func setUp(size: Int = 1 << 20) async throws -> Setup {
        let fixture = try await DownloadFixture.make(size: size, seed: 21)
        let serviceFolder = fixture.folder.path("service")
        try FileManager.default.createDirectory(at: serviceFolder, withIntermediateDirectories: true)
        return Setup(fixture: fixture, service: SimulatedBackgroundService(folder: serviceFolder))
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
        #expect(transfer.failed(task: 2, reason: "lost", now: setup.service.now) == .refused("lost"))
        setup.service.advance(by: 30)
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
            size: Int64(setup.fixture.bytes.count), sha256: setup.fixture.sha256, pieceSize: 256 << 10)
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

    /// Crafted answers, as the delegate would hand them over.
    static func crafted(
        _ transfer: inout BackgroundTransfer, piece: Int, task: Int, bytes: Int, headers: [String: String],
        in folder: URL
    )
        throws -> BackgroundTransfer.Outcome
    {
        transfer.assign(task: task, to: piece)
        let location = folder.appendingPathComponent("crafted-\(task)")
        try Data(count: bytes).write(to: location)
        return try transfer.finished(task: task, status: 206, headers: headers, location: location)
    }

    /// A piece continued from resume data ends with the 206 of its remainder, the file holding the whole piece:
    /// spliced. A piece that cannot be written (the disk, a directory in the way) is counted and waited on.
    @Test func aResumedPieceIsSplicedAndAnUnwritablePieceIsCounted() throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-crafted")
        defer { folder.remove() }
        var transfer = BackgroundTransfer(
            url: URL(string: "https://cdn.example/f")!, destination: folder.path("f.bin"), size: 4096,
            sha256: String(repeating: "a", count: 64), pieceSize: 1024)
        let resumed = try Self.crafted(
            &transfer, piece: 1, task: 1, bytes: 1024,
            headers: ["Content-Range": "bytes 1500-2047/4096", "ETag": "\"e\""], in: folder.url)
        #expect(resumed == .spliced(1024..<2048))
        try FileManager.default.removeItem(at: transfer.partialFile)
        try FileManager.default.createDirectory(at: transfer.partialFile, withIntermediateDirectories: true)
        let blocked = try Self.crafted(
            &transfer, piece: 2, task: 2, bytes: 1024,
            headers: ["Content-Range": "bytes 2048-3071/4096", "ETag": "\"e\""], in: folder.url)
        guard case .refused(let reason) = blocked else {
            Issue.record("\(blocked)")
            return
        }
        #expect(reason.contains("could not be written"))
        #expect(transfer.pieces[2].attempts == 1 && transfer.pieces[2].notBefore != nil)
    }

    /// CDN edges that disagree on the ETag would restart the file for ever: after three restarts it stops.
    @Test func aSourceThatKeepsChangingStopsTheTransfer() throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-crafted-etags")
        defer { folder.remove() }
        var transfer = BackgroundTransfer(
            url: URL(string: "https://cdn.example/f")!, destination: folder.path("f.bin"), size: 2048,
            sha256: String(repeating: "a", count: 64), pieceSize: 1024)
        var outcomes: [BackgroundTransfer.Outcome] = []
        for round in 0..<5 {
            _ = try Self.crafted(
                &transfer, piece: 0, task: 100 + round * 2, bytes: 1024,
                headers: ["Content-Range": "bytes 0-1023/2048", "ETag": "\"edge-a\""], in: folder.url)
            outcomes.append(
                try Self.crafted(
                    &transfer, piece: 1, task: 101 + round * 2, bytes: 1024,
                    headers: ["Content-Range": "bytes 1024-2047/2048", "ETag": "\"edge-b\""], in: folder.url))
            if transfer.failure != nil { break }
        }
        guard case .failed(let reason) = outcomes.last else {
            Issue.record("\(outcomes)")
            return
        }
        #expect(reason.contains("keeps changing") && outcomes.count == 4, "\(outcomes)")
        #expect(transfer.requestsToStart().isEmpty)
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
