import Foundation
import ModelDepot
import ModelDepotTesting
import Synchronization
import Testing

@Suite struct DownloadTaskTests {
    @Test func pauseStopsTheTransferAndResumeFinishesIt() async throws {
        let fixture = try await DownloadFixture.make(size: 3 << 20)
        defer { Task { await fixture.cleanUp() } }
        fixture.server.inject(.throttle(bytesPerSecond: 256 << 10), times: 1000)
        // Progress events are paced by the clock, so this test needs one that moves.
        let task = fixture.downloader(clock: ContinuousClock()).start(fixture.request(sha256: fixture.sha256))
        let states = task.states
        var sawDownloading = false
        for await state in states {
            if case .downloading(let progress) = state, progress.bytesCompleted > 256 << 10 {
                sawDownloading = true
                break
            }
        }
        #expect(sawDownloading)
        await task.pause()
        guard case .paused(let progress) = task.state else {
            Issue.record("expected paused, got \(task.state)")
            return
        }
        #expect((progress?.bytesCompleted ?? 0) > 0)
        // Paused means no traffic: nothing is sent while it stays paused.
        let requestsWhilePaused = fixture.server.requests.count
        #expect(FileManager.default.fileExists(atPath: fixture.request().partialPath))

        fixture.server.clearFaults()
        #expect(fixture.server.requests.count == requestsWhilePaused)
        task.resume()
        let result = try await task.result()
        #expect(result.bytesResumed > 0)
        #expect(try fixture.destinationBytes() == fixture.bytes)
        guard case .completed = task.state else {
            Issue.record("expected completed, got \(task.state)")
            return
        }
    }

    @Test func progressNeverGoesBackThroughPauseResumeAndCompletion() async throws {
        let fixture = try await DownloadFixture.make(size: 3 << 20)
        defer { Task { await fixture.cleanUp() } }
        fixture.server.inject(.throttle(bytesPerSecond: 256 << 10), times: 1000)
        let task = fixture.downloader(clock: ContinuousClock()).start(fixture.request(sha256: fixture.sha256))
        let seen = Mutex<[DownloadProgress]>([])
        let watcher = Task { for await progress in task.progress { seen.withLock { $0.append(progress) } } }
        #expect(await waitUntil { seen.withLock { $0.last?.bytesCompleted ?? 0 } > 256 << 10 })
        await task.pause()
        fixture.server.clearFaults()
        task.resume()
        _ = try await task.result()
        await watcher.value
        let events = seen.withLock { $0 }
        for (earlier, later) in zip(events, events.dropFirst()) {
            #expect(later.bytesCompleted >= earlier.bytesCompleted, "\(earlier) then \(later)")
            if earlier.totalBytes != nil { #expect(later.totalBytes == earlier.totalBytes) }
        }
        #expect(events.last?.phase == .completed)
        #expect(events.last?.bytesCompleted == Int64(fixture.bytes.count))
    }

    @Test func cancelCanDiscardThePartialData() async throws {
        let fixture = try await DownloadFixture.make(size: 2 << 20)
        defer { Task { await fixture.cleanUp() } }
        fixture.server.inject(.throttle(bytesPerSecond: 512 << 10), times: 1000)
        let request = fixture.request()
        let task = fixture.downloader().start(request)
        #expect(await waitUntil { FileManager.default.fileExists(atPath: request.resumeRecordPath) })
        await task.cancel(discardingPartialData: true)
        guard case .cancelled = task.state else {
            Issue.record("expected cancelled, got \(task.state)")
            return
        }
        #expect(!FileManager.default.fileExists(atPath: request.partialPath))
        #expect(!FileManager.default.fileExists(atPath: request.resumeRecordPath))
        let error = await captureError { _ = try await task.result() }
        #expect(error?.code == .cancelled)
    }

    @Test func progressEventsWalkThroughThePhasesInOrder() async throws {
        let fixture = try await DownloadFixture.make(size: 2 << 20)
        defer { Task { await fixture.cleanUp() } }
        let task = fixture.downloader().start(fixture.request(sha256: fixture.sha256))
        var phases: [DownloadProgress.Phase] = []
        var last: DownloadProgress?
        for await event in task.progress {
            if phases.last != event.phase { phases.append(event.phase) }
            if let previous = last { #expect(event.bytesCompleted >= previous.bytesCompleted) }
            last = event
        }
        #expect(phases.last == .completed)
        #expect(phases.filter { $0 != .resolving } == [.downloading, .verifying, .finalizing, .completed])
        #expect(last?.bytesCompleted == 2 << 20)
    }

    @Test func failuresArriveAsAFinalState() async throws {
        let fixture = try await DownloadFixture.make(size: 10_000)
        defer { Task { await fixture.cleanUp() } }
        fixture.server.inject(.status(404))
        let task = fixture.downloader().start(fixture.request())
        var last: DownloadTask.State?
        for await state in task.states { last = state }
        guard case .failed(let error) = last else {
            Issue.record("expected failed, got \(String(describing: last))")
            return
        }
        #expect(error.code == .notFound)
    }

    @MainActor
    @Test func theObservableModelFollowsTheTask() async throws {
        let fixture = try await DownloadFixture.make(size: 1 << 20)
        defer { Task { await fixture.cleanUp() } }
        let model = ObservedDownload(fixture.downloader().start(fixture.request(sha256: fixture.sha256)))
        _ = try await model.task.result()
        let done = await waitUntil { @MainActor in
            if case .completed = model.state { return true }
            return false
        }
        #expect(done)
        #expect(model.progress?.fractionCompleted == 1)
    }

    /// An observer a view let go of stops following the task: its loop is cancelled and the task's state
    /// stream ends, while the task itself stays as the app left it.
    @MainActor
    @Test func anObserverThatGoesEndsItsStream() async throws {
        let fixture = try await DownloadFixture.make(size: 1 << 20)
        defer { Task { await fixture.cleanUp() } }
        let task = fixture.downloader().start(fixture.request(sha256: fixture.sha256))
        await task.pause()
        var observer: ObservedDownload? = ObservedDownload(task)
        #expect(await waitUntil { task.stateSubscriberCount == 1 })
        #expect(observer?.task === task)
        observer = nil
        #expect(
            await waitUntil(timeout: .seconds(10)) { task.stateSubscriberCount == 0 },
            "the gone observer still follows the task")
        if case .paused = task.state {} else { Issue.record("the task should stay paused, is \(task.state)") }
        await task.cancel()
    }
}
