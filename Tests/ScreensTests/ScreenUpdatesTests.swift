import Foundation
import ModelDepot
import ModelDepotScreens
import ModelDepotTesting
import Synchronization
import Testing

/// What the app's views rely on: "Use" goes to the app and never to the downloads, a screen's stream misses no
/// change made while it loads, and following a download's progress does not ask the Hub again at every tick.
@Suite struct ScreenUpdatesTests {
    final class Calls: Sendable {
        let used = Mutex<[String]>([])
        let loads = Mutex(0)
    }

    @Test func useGoesToTheAppAndOtherActionsToTheDownloads() async throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-use")
        defer { folder.remove() }
        let downloads = try ScreensFixture.offline(in: folder)
        let calls = Calls()
        try await downloads.run(.use, on: "chat") { name in calls.used.withLock { $0.append(name) } }
        #expect(calls.used.withLock { $0 } == ["chat"])
        // Any other action is the downloads' (pausing nothing started here is refused, not handed to the app).
        await #expect(throws: ModelDepotError.self) {
            try await downloads.run(.pause, on: "chat") { _ in Issue.record("pause reached the app") }
        }
        #expect(calls.used.withLock { $0 } == ["chat"])
    }

    /// A change made while the first screen loads brings a second one: the stream subscribed before loading.
    @Test func aChangeWhileTheFirstScreenLoadsIsNotMissed() async throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-screens-stream")
        defer { folder.remove() }
        let downloads = try ScreensFixture.offline(in: folder)
        let calls = Calls()
        var seen = 0
        for try await _ in downloads.screens({
            let load = calls.loads.withLock { count in
                count += 1
                return count
            }
            // The first load changes something (a bandwidth cap set from another screen).
            if load == 1 { await downloads.setBandwidthLimit(bytesPerSecond: 1 << 20) }
            return load
        }) {
            seen += 1
            if seen == 2 { break }
        }
        #expect(seen == 2)
    }

    /// A change of the downloads redecides the detail's status without planning again (no Hub call per change);
    /// once the model is ready the page is loaded again, its files shown as here.
    @Test func theDetailFollowsTheDownloadWithoutAskingTheHubAgain() async throws {
        try await ScreensFixture.with(limit: 256 << 10) { fixture in
            let downloads = fixture.downloads
            var page = try await ModelDetailScreen.load("chat", downloads: downloads)
            #expect(fixture.apiRequestsSent > 0, "planning asks the Hub: the count below can see it")
            try await downloads.start("chat")
            #expect(await fixture.waitFor("chat") { if case .downloading = $0 { true } else { false } })
            try await downloads.pause("chat")
            #expect(await fixture.waitFor("chat") { if case .paused = $0 { true } else { false } })
            let before = fixture.apiRequestsSent
            for _ in 0..<20 { page = try await page.updated(downloads: downloads) }
            #expect(page.status.badge.kind == .paused, "\(page.status.badge)")
            #expect(fixture.apiRequestsSent == before, "the detail asked the Hub while following the download")
            try await downloads.resume("chat")
            #expect(await fixture.waitFor("chat") { if case .completed = $0 { true } else { false } })
            page = try await page.updated(downloads: downloads)
            #expect(page.status.badge.kind == .ready && page.files.allSatisfy(\.cached), "\(page.files)")
        }
    }
}
