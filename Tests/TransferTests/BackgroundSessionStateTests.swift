import Foundation
import ModelDepot
import ModelDepotTesting
import Synchronization
import Testing

/// The whole background session as the delegate drives it (``BackgroundSessionState``), against the simulated
/// service that behaves as Apple documents: a Hub that redirects to a CDN, lasting failures, relaunches, resume
/// data, the system's completion handler, and the app's calls racing the delegate's.
@Suite struct BackgroundSessionStateTests {
    /// What `onFinished` heard.
    final class Reports: Sendable {
        let list = Mutex<[(URL, Result<URL, any Error>)]>([])
        var all: [(URL, Result<URL, any Error>)] { list.withLock { $0 } }
        func record(_ destination: URL, _ result: Result<URL, any Error>) {
            list.withLock { $0.append((destination, result)) }
        }
        var failures: [String] {
            all.compactMap { if case .failure(let error) = $0.1 { "\(error)" } else { nil } }
        }
    }

    struct World {
        let setup: BackgroundTransferTests.Setup
        let hub: FaultServer
        let reports = Reports()
        var service: SimulatedBackgroundService { setup.service }
        var fixture: DownloadFixture { setup.fixture }
        var resolveURL: URL { hub.url("/acme/tiny/resolve/main/model.bin") }
        var size: Int64 { Int64(fixture.bytes.count) }

        func state(resuming: [URL] = []) -> BackgroundSessionState {
            let service = service
            return BackgroundSessionState(
                system: service, resuming: resuming, now: { service.now }, onFinished: reports.record)
        }

        /// Asks `state` for the fixture's file through the Hub, in pieces of 256 KiB (four of them).
        func download(on state: BackgroundSessionState, sha256: String? = nil) throws {
            try state.download(
                url: resolveURL, to: fixture.destination, size: size, sha256: sha256 ?? fixture.sha256,
                pieceSize: 256 << 10)
        }

        func cleanUp() async {
            try? await hub.shutdown()
            await fixture.cleanUp()
        }
    }

    /// A fixture file behind a Hub that redirects every resolve to it (the CDN, with ETags of its own).
    static func world(size: Int = 1 << 20) async throws -> World {
        let setup = try await BackgroundTransferTests.setUp(size: size)
        let hub = try await FaultServer.start(files: [:])
        hub.inject(.redirect(to: setup.fixture.url.absoluteString), times: 1000)
        return World(setup: setup, hub: hub)
    }

    @Test func aRedirectedFileFinishesAcrossARelaunchWithEachRangeFetchedOnce() async throws {
        let world = try await Self.world()
        defer { Task { await world.cleanUp() } }
        let first = world.state()
        try world.download(on: first)
        // The record is on disk before any task it names runs.
        let saved = try #require(try BackgroundTransfer.load(for: world.fixture.destination))
        #expect(saved.tasksOut == [1, 2, 3, 4])
        #expect(world.service.request(of: 1)?.headers["If-Range"] == nil, "no validator before the first 206")
        try await world.service.deliver(1, to: first)

        // The app is gone; the system finishes task 2 meanwhile and keeps 3 and 4. Launch 2 reads the record.
        let second = world.state(resuming: [world.fixture.destination])
        second.reconcile(runningTasks: world.service.tasks)
        try await world.service.deliverAll(to: second)
        #expect(world.reports.failures.isEmpty, "\(world.reports.failures)")
        #expect(try Data(contentsOf: world.fixture.destination) == Data(world.fixture.bytes))
        let ranges = world.fixture.server.requests.map { $0.header("Range") ?? "" }
        #expect(ranges.count == 4 && Set(ranges).count == 4, "each range once from the CDN: \(ranges)")
        #expect(world.hub.requests.allSatisfy { $0.header("Authorization") == nil })
        #expect(!FileManager.default.fileExists(atPath: saved.recordFile.path))
    }

    @Test func laterPiecesCarryTheCDNsValidatorAndAChangeCancelsEveryTaskOut() async throws {
        let world = try await Self.world()
        defer { Task { await world.cleanUp() } }
        let state = world.state()
        try world.download(on: state)
        try await world.service.deliver(1, to: state)
        #expect(state.transfer(of: world.fixture.destination)?.bytesDone == 256 << 10)

        // The file changes upstream; task 2 (asked before any validator was known) brings the new one's ETag.
        world.fixture.server.setFile("/model.bin", SampleData.bytes(count: 1 << 20, seed: 5))
        try await world.service.deliver(2, to: state)
        #expect(world.service.cancelled == [3, 4], "the old file's tasks still out are cancelled")
        world.service.deliverCancellations(to: state)
        let transfer = try #require(state.transfer(of: world.fixture.destination))
        #expect(transfer.bytesDone == 0 && transfer.tasksOut == [5, 6, 7, 8])
        #expect(world.service.request(of: 5)?.headers["If-Range"] == nil, "the validator is taken anew")
    }

    @Test func lastingFailuresBackOffThenEndTheTransferAndARetryKeepsThePieces() async throws {
        let world = try await Self.world()
        defer { Task { await world.cleanUp() } }
        let state = world.state()
        try world.download(on: state)
        try await world.service.deliver(1, to: state)
        world.fixture.server.inject(.status(404), times: 2)
        try await world.service.deliver(2, to: state)
        // Asked for again, not before the backoff: the simulation refuses to run it earlier.
        let again = try #require(state.transfer(of: world.fixture.destination)?.pieces[1])
        #expect(again.attempts == 1 && again.notBefore == world.service.now.addingTimeInterval(30))
        let retried = try #require(again.task)
        #expect(world.service.request(of: retried)?.notBefore == again.notBefore)
        // Asked after the first 206: If-Range carries the CDN's validator, not the Hub metadata's.
        #expect(world.service.request(of: retried)?.headers["If-Range"] == "\"v1-\(1 << 20)\"")
        world.service.advance(by: 30)
        try await world.service.deliver(retried, to: state)

        // Twice 404: the transfer ends with the reason; the other tasks are cancelled, nothing new is asked.
        let failure = try #require(world.reports.failures.first)
        #expect(failure.contains("answered 404") && failure.contains("2 times"), "\(failure)")
        #expect(Set(world.service.cancelled) == [3, 4])
        world.service.deliverCancellations(to: state)
        #expect(world.service.tasks.isEmpty)
        #expect(world.reports.all.count == 1, "told once")
        #expect(!FileManager.default.fileExists(atPath: world.fixture.destination.path))

        // The person asks again: counts start over and the piece already in is kept.
        try world.download(on: state)
        #expect(state.transfer(of: world.fixture.destination)?.bytesDone == 256 << 10)
        try await world.service.deliverAll(to: state)
        #expect(try Data(contentsOf: world.fixture.destination) == Data(world.fixture.bytes))
        #expect(world.fixture.server.requests.filter { $0.header("Range") == "bytes=0-262143" }.count == 1)
    }

    @Test func bytesThatAreNotTheExpectedFileAreFetchedOnceMoreThenRefused() async throws {
        let world = try await Self.world()
        defer { Task { await world.cleanUp() } }
        let state = world.state()
        try world.download(on: state, sha256: String(repeating: "0", count: 64))
        try await world.service.deliverAll(to: state)
        // Told once, when it stops: the first mismatch is simply fetched again.
        #expect(world.reports.failures.count == 1, "\(world.reports.failures)")
        #expect(world.reports.failures.last?.contains("after twice the download stops") == true)
        #expect(world.fixture.server.requests.count == 8, "the file fetched twice, not forever")
        #expect(!FileManager.default.fileExists(atPath: world.fixture.destination.path), "nothing unverified placed")
    }

    @Test func aRelaunchCancelsTasksNoRecordNamesAndAsksAgainForLostOnes() async throws {
        let world = try await Self.world()
        defer { Task { await world.cleanUp() } }
        try world.download(on: world.state())
        // The person force-quit the app: the system dropped task 2; a task of some older record is still there.
        world.service.lose(2)
        let stray = world.service.stray()
        let relaunched = world.state(resuming: [world.fixture.destination])
        relaunched.reconcile(runningTasks: world.service.tasks)
        #expect(world.service.cancelled == [stray])
        let transfer = try #require(relaunched.transfer(of: world.fixture.destination))
        #expect(transfer.tasksOut.sorted() == [1, 3, 4, stray + 1])
        world.service.deliverCancellations(to: relaunched)
        try await world.service.deliverAll(to: relaunched)
        #expect(try Data(contentsOf: world.fixture.destination) == Data(world.fixture.bytes))
    }

    @Test func aPieceThatFailedWithResumeDataContinuesFromIt() async throws {
        let world = try await Self.world()
        defer { Task { await world.cleanUp() } }
        let state = world.state()
        try world.download(on: state)
        let resumeData = Data("opaque resume data".utf8)
        world.service.fail(3, resumeData: resumeData, to: state)
        let piece = try #require(state.transfer(of: world.fixture.destination)?.pieces[2])
        let task = try #require(piece.task)
        #expect(world.service.request(of: task)?.resumeData == resumeData)
        #expect(piece.resumeData == nil, "handed to the new task, not kept for another")
    }

    /// iOS 26's continued processing: only a person's download, from the foreground, on a system that has it, with
    /// an identifier under the bundle identifier that the app's Info.plist lists.
    @Test func continuedProcessingIsAskedForOnlyAsApplePermits() throws {
        let permitted = ["com.example.models.download.*"]
        let processing = try ContinuedProcessing(
            identifier: "com.example.models.download.llama", bundleIdentifier: "com.example.models",
            permittedIdentifiers: permitted)
        #expect(
            processing.submission(startedByThePerson: true, isInForeground: true, supportsContinuedProcessing: true)
                == .success("com.example.models.download.llama"))
        #expect(
            processing.submission(startedByThePerson: false, isInForeground: true, supportsContinuedProcessing: true)
                == .failure(.notStartedByThePerson))
        #expect(
            processing.submission(startedByThePerson: true, isInForeground: false, supportsContinuedProcessing: true)
                == .failure(.notInForeground))
        #expect(
            processing.submission(startedByThePerson: true, isInForeground: true, supportsContinuedProcessing: false)
                == .failure(.unsupportedSystem))
        #expect(throws: ModelDepotError.self) {
            try ContinuedProcessing(
                identifier: "org.other.download", bundleIdentifier: "com.example.models",
                permittedIdentifiers: permitted)
        }
        #expect(throws: ModelDepotError.self) {
            try ContinuedProcessing(
                identifier: "com.example.models.sync", bundleIdentifier: "com.example.models",
                permittedIdentifiers: permitted)
        }
    }

    /// The system ends the continued-processing time mid-file: the engine's download is cancelled, and the file goes
    /// on as background pieces that adopt the ranges the engine finished instead of fetching them again.
    @Test func anExpiredContinuedDownloadGoesOnAsBackgroundPiecesKeepingItsBytes() async throws {
        let world = try await Self.world(size: 2 << 20)
        defer { Task { await world.cleanUp() } }
        world.fixture.server.inject(.throttle(bytesPerSecond: 256 << 10), times: 1000)
        var configuration = DownloadFixture.configuration()
        configuration.maxConnections = 1
        configuration.initialConnections = 1
        let request = world.fixture.request(sha256: world.fixture.sha256)
        let engine = Task { try await world.fixture.downloader(configuration).download(request) }
        #expect(await waitUntil { world.fixture.server.bodyBytesSent >= 700 << 10 })
        engine.cancel()
        _ = try? await engine.value
        world.fixture.server.clearFaults()
        // The cancelled connection may still be sending its last slice: counted from when it has closed, or its
        // tail would be taken for bytes fetched again (a loaded 2-core CI run once saw 13 kB of it).
        #expect(await waitUntil { world.fixture.server.openConnections == 0 })
        let before = world.fixture.server.bodyBytesSent

        let state = world.state()
        try ContinuedProcessing.handOver(
            [.init(request, url: world.resolveURL, size: world.size, sha256: world.fixture.sha256)], to: state,
            pieceSize: 256 << 10)
        let adopted = try #require(state.transfer(of: world.fixture.destination))
        #expect(adopted.bytesDone >= 256 << 10, "no finished range was adopted: \(adopted.pieces)")
        try await world.service.deliverAll(to: state)
        #expect(world.reports.failures.isEmpty, "\(world.reports.failures)")
        #expect(try Data(contentsOf: world.fixture.destination) == Data(world.fixture.bytes))
        let fetchedAgain = world.fixture.server.bodyBytesSent - before
        #expect(fetchedAgain == world.size - adopted.bytesDone, "the background fetched only what was missing")
    }

    /// A relaunch's list of the session's tasks can be older than tasks this launch already made: those are not
    /// forgotten (they would be asked for twice); a record whose pieces were all in is placed at relaunch.
    @Test func aStaleTaskListForgetsNothingMadeSinceAndACompleteRecordIsPlaced() async throws {
        let world = try await Self.world()
        defer { Task { await world.cleanUp() } }
        let state = world.state()
        try world.download(on: state)
        state.reconcile(runningTasks: [])
        #expect(state.transfer(of: world.fixture.destination)?.tasksOut == [1, 2, 3, 4])
        #expect(world.service.tasks == [1, 2, 3, 4], "nothing asked for twice")

        // Every piece spliced, then the app killed before didComplete: the next launch places the file.
        for task in [1, 2, 3, 4] {
            let finished = try await world.service.run(task)
            state.didFinishDownloading(
                task: task, status: finished.status, headers: finished.headers, location: finished.location)
        }
        let relaunched = world.state(resuming: [world.fixture.destination])
        relaunched.reconcile(runningTasks: [])
        #expect(try Data(contentsOf: world.fixture.destination) == Data(world.fixture.bytes))
        #expect(world.reports.all.count == 1 && world.reports.failures.isEmpty)
    }

    /// A record that cannot be written leaves no task running unrecorded: the ones made are cancelled.
    @Test func aRecordThatCannotBeSavedLeavesNoTaskBehind() async throws {
        let world = try await Self.world()
        defer { Task { await world.cleanUp() } }
        let probe = BackgroundTransfer(
            url: world.resolveURL, destination: world.fixture.destination, size: world.size,
            sha256: world.fixture.sha256)
        try FileManager.default.createDirectory(at: probe.recordFile, withIntermediateDirectories: true)
        let state = world.state()
        #expect(throws: (any Error).self) { try world.download(on: state) }
        #expect(world.service.tasks.isEmpty && world.service.cancelled == [1, 2, 3, 4])
        #expect(state.transfer(of: world.fixture.destination)?.tasksOut ?? [] == [])
    }

    @Test func anEmptyFileIsPlacedAtOnce() async throws {
        let world = try await Self.world()
        defer { Task { await world.cleanUp() } }
        let destination = world.fixture.folder.path("empty.bin")
        try world.state().download(
            url: world.resolveURL, to: destination, size: 0, sha256: SampleData.sha256([]), pieceSize: 256 << 10)
        #expect(world.service.tasks.isEmpty)
        #expect(world.reports.failures.isEmpty)
        #expect(try Data(contentsOf: destination).isEmpty)
    }

    @Test func theSystemsHandlerRunsAlsoWhenTheSessionFinishedFirst() async throws {
        let world = try await Self.world()
        defer { Task { await world.cleanUp() } }
        let state = world.state()
        // The session says every event is in before the app delegate hands over the handler.
        #expect(state.eventsDelivered() == nil)
        let called = Mutex(0)
        state.handleEvents { called.withLock { $0 += 1 } }
        #expect(called.withLock { $0 } == 1)
        // The usual order: handler first, then the session's word.
        state.handleEvents { called.withLock { $0 += 1 } }
        #expect(called.withLock { $0 } == 1)
        state.eventsDelivered()?()
        #expect(called.withLock { $0 } == 2)
    }

    /// The app's `download` calls and the delegate's calls arrive on different threads; whatever the interleaving,
    /// no piece has two tasks, every task made is either out or cancelled, and the record on disk is the state.
    @Test func theAppsCallsAndTheDelegatesNeverLoseATask() async throws {
        let world = try await Self.world()
        defer { Task { await world.cleanUp() } }
        let location = world.fixture.folder.path("never-read.tmp")
        try Data(count: 10).write(to: location)
        for round in 0..<60 {
            let destination = world.fixture.folder.path("race-\(round).bin")
            let state = world.state()
            try state.download(
                url: world.resolveURL, to: destination, size: 4096, sha256: world.fixture.sha256, pieceSize: 1024)
            let first = try #require(state.transfer(of: destination)?.tasksOut)
            await withTaskGroup(of: Void.self) { group in
                for task in first {
                    group.addTask {
                        // A short piece: refused, asked for again.
                        state.didFinishDownloading(task: task, status: 206, headers: [:], location: location)
                        state.didComplete(task: task, error: nil)
                    }
                    group.addTask {
                        try? state.download(
                            url: world.resolveURL, to: destination, size: 4096, sha256: world.fixture.sha256,
                            pieceSize: 1024)
                    }
                }
            }
            let transfer = try #require(state.transfer(of: destination))
            let out = transfer.tasksOut
            #expect(Set(out).count == out.count && out.count == 4, "round \(round): \(transfer.pieces)")
            #expect(Set(world.service.tasks).isSuperset(of: out))
            #expect(world.service.unresumed.isEmpty, "round \(round): tasks made and never resumed")
            #expect(try BackgroundTransfer.load(for: destination) == transfer, "round \(round): the record lags")
        }
    }
}
