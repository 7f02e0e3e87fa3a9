import Foundation
import ModelDepot
import ModelDepotTesting
import Testing

@testable import ModelDepotScreens

/// What the SwiftUI views (ModelDepotSwiftUI, compiled only on Apple platforms) read and call, checked here
/// where they cannot run: every member a view uses is asserted by a presentation-layer test, this one for the
/// members no other test reads.
@Suite struct SwiftUIBindingTests {
    @Test func theButtonsRunThroughOneDispatch() async throws {
        try await ScreensFixture.with(limit: 256 << 10) { fixture in
            let downloads = fixture.downloads
            try await downloads.perform(.download, on: "chat")
            #expect(await waitUntil { (await DownloadsScreen.load(downloads).rows.first?.bytes ?? 0) > 0 })
            try await downloads.perform(.pause, on: "chat")
            #expect(await fixture.waitFor("chat") { if case .paused = $0 { true } else { false } })

            // What DownloadsView shows of a paused download.
            let screen = await DownloadsScreen.load(downloads)
            let row = try #require(screen.rows.first)
            #expect(row.stateText == "Paused" && row.speedText == nil && row.etaText == nil && row.waiting == nil)
            #expect(row.bytesText.hasSuffix(" / 1.0 MiB"), "\(row.bytesText)")
            #expect(row.filesText?.contains("of 2") == true, "\(row.filesText ?? "nil")")
            #expect(screen.overallText == row.bytesText)

            let use = await #expect(throws: ModelDepotError.self) { try await downloads.perform(.use, on: "chat") }
            #expect(use?.code == .invalidArgument)
            await downloads.setBandwidthLimit(bytesPerSecond: nil)
            try await downloads.perform(.resume, on: "chat")
            #expect(await fixture.waitFor("chat") { if case .completed = $0 { true } else { false } })

            // What ModelDetailView and StorageView show once it is here.
            let detail = try await ModelDetailScreen.load("chat", downloads: downloads)
            #expect(detail.location?.contains("models--acme--chat") == true, "\(detail.location ?? "nil")")
            let storage = await StorageScreen.load(downloads.manager)
            #expect(storage.rows.first?.kindText.isEmpty == false)
            await #expect(throws: ModelDepotError.self) { try await downloads.perform(.download, on: "no-such-model") }
        }
    }
}
