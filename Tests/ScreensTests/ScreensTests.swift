import Foundation
import ModelDepot
import ModelDepotScreens
import ModelDepotTesting
import Synchronization
import Testing

/// The screens over a real mirror and cache: what each one shows, and what its actions do.
@Suite struct ScreensTests {
    @Test func modelsListFiltersSearchesAndSaysWhatIsHere() async throws {
        try await ScreensFixture.with { fixture in
            let all = await ModelsScreen.load(fixture.downloads)
            #expect(all.rows.map(\.name) == ["chat", "embed", "ghost"], "recommended first, then by size")
            #expect(all.rows.allSatisfy { $0.status.badge.kind == .notDownloaded && $0.status.action == .download })
            #expect(all.presets.map(\.name) == ["minimal", "standard"])
            #expect(all.presets.first?.summary == "4 B" && all.presets.first?.complete == false)

            let embeddings = await ModelsScreen.load(fixture.downloads, filter: .init(capability: .embeddings))
            #expect(embeddings.rows.map(\.name) == ["embed"])
            let searched = await ModelsScreen.load(fixture.downloads, filter: .init(search: "SMALL chat"))
            #expect(searched.rows.map(\.name) == ["chat"])
            let none = await ModelsScreen.load(fixture.downloads, filter: .init(format: .coreml))
            #expect(none.rows.isEmpty && none.emptyMessage?.contains("No model matches") == true)
            #expect(throws: ModelDepotError.self) {
                try ModelsScreen.Filter(capability: "telepathy", format: nil, search: nil)
            }

            try await fixture.downloads.start("embed")
            #expect(await fixture.waitFor("embed") { if case .completed = $0 { true } else { false } })
            let after = await ModelsScreen.load(fixture.downloads)
            let embed = try #require(after.rows.first { $0.name == "embed" })
            #expect(embed.status.badge.kind == .ready && embed.status.action == .use && embed.status.selectable)
            #expect(after.presets.first?.complete == true && after.presets.first?.summary == "4 B, all here")
            #expect(after.presets.last?.summary.contains("4 B already here") == true, "\(after.presets)")
        }
    }

    /// The Hub's search beside the catalog, and what is on the device that no entry names; offline, the page
    /// says why nothing was searched.
    @Test func hubSearchAndWhatElseIsHere() async throws {
        try await ScreensFixture.with { fixture in
            let downloads = fixture.downloads
            _ = try await downloads.manager.download(try RepoID("acme/extra")).result()
            let screen = await ModelsScreen.load(downloads, filter: .init(hub: "chat"))
            let chat = try #require(screen.hubResults.first { $0.id == "acme/chat" }, "\(screen.hubResults)")
            #expect(chat.author == "acme" && !chat.cached && screen.hubMessage == nil)
            #expect(screen.otherCached.map(\.id) == ["acme/extra"])
            let extra = await ModelsScreen.load(downloads, filter: .init(hub: "extra"))
            #expect(extra.hubResults.first { $0.id == "acme/extra" }?.cached == true, "\(extra.hubResults)")
            let none = await ModelsScreen.load(downloads, filter: .init(hub: "zebra-unicorn"))
            #expect(none.hubResults.isEmpty && none.hubMessage?.contains("no model matching") == true)
        }
        let folder = try TemporaryDirectory(prefix: "modeldepot-screens-offline")
        defer { folder.remove() }
        let offline = try ScreensFixture.offline(in: folder)
        let screen = await ModelsScreen.load(offline, filter: .init(hub: "chat"))
        #expect(screen.hubMessage?.hasPrefix("Offline") == true && screen.rows.count == 3)
    }

    @Test func aDownloadPausesResumesAndNeverGoesBack() async throws {
        try await ScreensFixture.with(limit: 256 << 10) { fixture in
            let downloads = fixture.downloads
            try await downloads.start("chat")
            // While bytes flow the row says how many connections carry them.
            #expect(
                await waitUntil {
                    let row = await DownloadsScreen.load(downloads).rows.first
                    return (row?.bytes ?? 0) > 64 << 10 && row?.connectionsText?.contains("connection") == true
                })
            try await downloads.pause("chat")
            #expect(await fixture.waitFor("chat") { if case .paused = $0 { true } else { false } })
            let paused = await DownloadsScreen.load(downloads)
            let row = try #require(paused.rows.first)
            #expect(
                row.state == "paused" && row.actions.map(\.action) == [.resume, .cancel] && (row.fraction ?? 0) > 0)
            #expect(paused.overallFraction == row.fraction && paused.bandwidthText == "256.0 KiB/s")
            let models = await ModelsScreen.load(downloads)
            #expect(models.rows.first { $0.name == "chat" }?.status.action == .resume)

            await downloads.setBandwidthLimit(bytesPerSecond: nil)
            try await downloads.resume("chat")
            let seen = Mutex<[Double]>([])
            let done = await waitUntil {
                let screen = await DownloadsScreen.load(downloads)
                if let fraction = screen.rows.first?.fraction { seen.withLock { $0.append(fraction) } }
                return screen.rows.first?.state == "completed"
            }
            #expect(done)
            let fractions = seen.withLock { $0 }
            #expect(fractions == fractions.sorted(), "the bar never goes back: \(fractions)")
            #expect((fractions.first ?? 0) >= (row.fraction ?? 1))
            let final = await DownloadsScreen.load(downloads)
            #expect(final.rows.first?.actions.map(\.action) == [.use] && final.bandwidthText == "no limit")
        }
    }

    /// The rows follow the manager's one registry: a download an app started itself shows, and a delete that
    /// stops a download mid-way leaves its row cancelled, not stuck on "downloading".
    @Test func theRowsFollowTheManagersDownloadsWhoeverStartedThem() async throws {
        try await ScreensFixture.with(limit: 256 << 10) { fixture in
            let downloads = fixture.downloads
            let entry = try downloads.catalogEntry("chat")
            let task = await downloads.manager.download(entry)
            try await downloads.start("chat")  // joins the app's download
            #expect(await downloads.manager.downloads.count == 1)
            #expect(
                await waitUntil {
                    let row = await DownloadsScreen.load(downloads).rows.first
                    return row?.state == "downloading" && (row?.bytes ?? 0) > 0
                })
            _ = try await downloads.manager.delete(entry.repo)
            #expect(task.state.isFinal)
            #expect(await fixture.waitFor("chat") { if case .cancelled = $0 { true } else { false } })
            #expect(await DownloadsScreen.load(downloads).rows.first?.state == "cancelled")
        }
    }

    /// Progress moves no generation, so the web app's events re-decide statuses from memory; a pause, an end or a
    /// change of the cache moves it, and the models screen is read from the disk again. The statuses decided from
    /// memory are the ones a full load decides.
    @Test func progressAloneDoesNotMakeTheScreensReadTheDisk() async throws {
        try await ScreensFixture.with(limit: 256 << 10) { fixture in
            let downloads = fixture.downloads
            try await downloads.start("chat")
            #expect(await waitUntil { (await downloads.entry("chat")?.progress?.bytesCompleted ?? 0) > 0 })
            let started = await downloads.generation
            let screen = await ModelsScreen.load(downloads)
            let before = await downloads.entry("chat")?.progress?.bytesCompleted ?? 0
            #expect(
                await waitUntil { (await downloads.entry("chat")?.progress?.bytesCompleted ?? 0) > before + 32 << 10 })
            #expect(await downloads.generation == started, "progress is not a change the disk must be read for")

            try await downloads.pause("chat")
            #expect(await fixture.waitFor("chat") { if case .paused = $0 { true } else { false } })
            let paused = await downloads.generation
            #expect(paused > started)
            let fromMemory = await screen.withDownloads(downloads)
            let fromDisk = await ModelsScreen.load(downloads)
            #expect(fromMemory.rows.map(\.status) == fromDisk.rows.map(\.status))
            #expect(fromMemory.rows.map(\.status) != screen.rows.map(\.status), "the paused row changed")

            await downloads.cacheChanged()
            #expect(await downloads.generation == paused + 1)
            try await downloads.cancel("chat")
        }
    }

    @Test func aFailureSaysWhyAndRetryWorks() async throws {
        try await ScreensFixture.with { fixture in
            let downloads = fixture.downloads
            try await downloads.start("ghost")
            #expect(await fixture.waitFor("ghost") { if case .failed = $0 { true } else { false } })
            let failed = await DownloadsScreen.load(downloads)
            #expect(failed.rows.first?.actions.map(\.action) == [.retry])
            #expect(failed.rows.first?.message?.contains("not found") == true, "\(failed.rows)")
            let models = await ModelsScreen.load(downloads)
            #expect(models.rows.first { $0.name == "ghost" }?.status.badge.kind == .failed)

            // The repository appears on the mirror; Retry succeeds.
            let folder = fixture.folder.path("repos/acme/ghost")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data("GGUF".utf8).write(to: folder.appendingPathComponent("x.gguf"))
            try await downloads.retry("ghost")
            #expect(await fixture.waitFor("ghost") { if case .completed = $0 { true } else { false } })

            // Cancelling is not a failure.
            try await downloads.start("chat")
            try await downloads.cancel("chat")
            #expect(await fixture.waitFor("chat") { if case .cancelled = $0 { true } else { false } })
            let cancelled = await DownloadsScreen.load(downloads).rows.first { $0.name == "chat" }
            #expect(cancelled?.state == "cancelled" && cancelled?.message == nil)

            await #expect(throws: ModelDepotError.self) { try await downloads.start("../../etc/passwd") }
            await #expect(throws: ModelDepotError.self) { try await downloads.pause("embed") }
        }
    }

    @Test func aDamagedFileIsShownWithItsReasonAndRepaired() async throws {
        try await ScreensFixture.with { fixture in
            let downloads = fixture.downloads
            try await downloads.start("chat")
            #expect(await fixture.waitFor("chat") { if case .completed = $0 { true } else { false } })
            let entry = try downloads.catalogEntry("chat")
            let snapshot = try #require(try downloads.manager.readiness(of: entry).folder)
            let blob = try FileManager.default.destinationOfSymbolicLink(
                atPath: snapshot.appendingPathComponent("weights.bin").path)
            let blobPath = snapshot.appendingPathComponent(blob).standardizedFileURL.path
            try Data(repeating: 0, count: 16).write(to: URL(fileURLWithPath: blobPath))

            let detail = try await ModelDetailScreen.load("chat", downloads: downloads)
            #expect(detail.status.badge.kind == .corrupt && detail.status.action == .repair)
            #expect(detail.status.badge.reason?.contains("weights.bin") == true, "\(detail.status.badge)")
            try await downloads.repair("chat")
            let repaired = try await ModelDetailScreen.load("chat", downloads: downloads)
            #expect(repaired.status.badge.kind == .ready, "\(repaired.status.badge)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: blobPath)) == Data(ScreensFixture.weights))
        }
    }

    @Test func detailShowsFilesFactsAndThePlan() async throws {
        try await ScreensFixture.with { fixture in
            let detail = try await ModelDetailScreen.load("chat", downloads: fixture.downloads)
            #expect(detail.files.map(\.path) == ["config.json", "weights.bin"])
            #expect(detail.files.allSatisfy { !$0.cached })
            #expect(detail.planText.hasPrefix("Downloading fetches 1.0 MiB; ") && detail.fits, "\(detail.planText)")
            #expect(detail.facts.contains(.init(label: "Context length", value: "2048 tokens")))
            #expect(detail.facts.contains(.init(label: "Storage", value: "small (under 500 MB)")))
            await #expect(throws: ModelDepotError.self) {
                _ = try await ModelDetailScreen.load("nope", downloads: fixture.downloads)
            }
        }
        // Offline: the plan cannot be known and the page says why.
        let folder = try TemporaryDirectory(prefix: "modeldepot-screens-offline")
        defer { folder.remove() }
        let offline = try ScreensFixture.offline(in: folder)
        let detail = try await ModelDetailScreen.load("chat", downloads: offline)
        #expect(detail.planText.contains("cannot be asked") && detail.status.action == .download, "\(detail.planText)")
    }

    @Test func onboardingGoesFromOfferToContinue() async throws {
        try await ScreensFixture.with { fixture in
            let downloads = fixture.downloads
            let offer = try await OnboardingScreen.load("embed", downloads: downloads)
            #expect(offer.step == .offer && offer.action == .download && offer.message.contains("4 B"))
            try await downloads.start("embed")
            #expect(await fixture.waitFor("embed") { if case .completed = $0 { true } else { false } })
            let ready = try await OnboardingScreen.load("embed", downloads: downloads)
            #expect(ready.step == .ready && ready.action == .use && ready.actionLabel == "Continue")
            await #expect(throws: ModelDepotError.self) {
                _ = try await OnboardingScreen.load("nope", downloads: downloads)
            }
        }
    }
}
