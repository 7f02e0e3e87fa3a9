import Foundation
import ModelDepot
import ModelDepotScreens
import ModelDepotTesting
import Testing

/// The Storage screen over a real cache: what it lists, what each action previews and then does.
@Suite struct StorageScreenTests {
    @Test func listsPinsPreviewsPrunesDeletesAndVerifies() async throws {
        try await ScreensFixture.with { fixture in
            let manager = fixture.downloads.manager
            let empty = await StorageScreen.load(manager)
            #expect(empty.rows.isEmpty && empty.emptyMessage != nil && empty.totalText == "0 repositories, 0 B")
            #expect(empty.cacheFolder == manager.cache.root.path)

            _ = try await manager.download(try RepoID("acme/chat")).result()
            _ = try await manager.download(try RepoID("acme/embed")).result()
            let now = Date().addingTimeInterval(3 * 86_400)
            let screen = await StorageScreen.load(manager, now: now)
            #expect(Set(screen.rows.map(\.id)) == ["acme/chat", "acme/embed"])
            let chat = try #require(screen.rows.first { $0.id == "acme/chat" })
            #expect(chat.sizeOnDisk == Int64(ScreensFixture.weights.count + 8) && chat.sizeText == "1.0 MiB")
            #expect(chat.lastUsedText == "3 days ago" && chat.revisionsText == "1 revision" && !chat.pinned)
            #expect(chat.deleteConfirmation == "Delete acme/chat? This frees 1.0 MiB. It can be downloaded again.")
            #expect(chat.actions.map(\.action) == [.delete, .pin, .verify])
            #expect(screen.totalBytes == screen.rows.reduce(0) { $0 + $1.sizeOnDisk })
            #expect(screen.freeSpaceText?.hasSuffix("free on this disk") == true)
            #expect(screen.detached.removes.isEmpty && screen.detached.summary == "Nothing to remove.")

            // Pinned: pruning to nothing previews removing only the other one, and removes nothing yet.
            #expect(try await StorageScreen.perform(.pin, on: "acme/chat", manager).message.contains("pinned"))
            let pinned = await StorageScreen.load(manager)
            #expect(pinned.rows.first { $0.id == "acme/chat" }?.actions.map(\.action) == [.delete, .unpin, .verify])
            let preview = try await StorageScreen.prunePreview(manager, maxSize: 0)
            #expect(preview.removes == ["acme/embed"] && preview.pinnedKept == ["acme/chat"])
            #expect(preview.summary.hasPrefix("Removes acme/embed: frees "))
            #expect(preview.summary.contains("still over the limit"))
            #expect(await StorageScreen.load(manager).rows.count == 2, "a preview removes nothing")

            // Verify tells a damaged blob apart; delete frees what the confirmation said.
            let blobs = manager.cache.root.appendingPathComponent("models--acme--chat/blobs")
            let blob = try #require(
                try FileManager.default.contentsOfDirectory(atPath: blobs.path).first {
                    try FileManager.default.attributesOfItem(atPath: blobs.appendingPathComponent($0).path)[.size]
                        as? Int == ScreensFixture.weights.count
                })
            try Data(count: ScreensFixture.weights.count).write(to: blobs.appendingPathComponent(blob))
            let verified = try await StorageScreen.perform(.verify, on: "acme/chat", manager)
            #expect(verified.message.contains("1 file is damaged") && verified.next?.action == .repair)
            let repaired = try await StorageScreen.perform(.repair, on: "acme/chat", manager)
            #expect(repaired.message == "acme/chat is repaired: 1 file downloaded again.")
            #expect(try await manager.verify(try RepoID("acme/chat")).problems.isEmpty)
            #expect(
                try await StorageScreen.perform(.verify, on: "acme/embed", manager).message.contains(
                    "every file matches"))
            let deleted = try await StorageScreen.perform(.delete, on: "acme/embed", manager).message
            let embedRow = try #require(screen.rows.first { $0.id == "acme/embed" })
            #expect(deleted == "Deleted acme/embed: \(ByteFormat.string(embedRow.freedByDelete)) freed.")
            #expect(await StorageScreen.load(manager).rows.map(\.id) == ["acme/chat"])
            // Unpinned, pruning to nothing removes it and says what it freed.
            _ = try await StorageScreen.perform(.unpin, on: "acme/chat", manager)
            let pruned = try await StorageScreen.prune(manager, maxSize: 0)
            #expect(pruned.message == "Removed acme/chat: \(chat.sizeText) freed.")
            #expect(await StorageScreen.load(manager).rows.isEmpty)
            await #expect(throws: ModelDepotError.self) {
                try await StorageScreen.perform(.pin, on: "acme/chat", type: "space", manager)
            }
        }
    }
    /// One scan answers both: the chart shows every partial download no process works on, the prune offers only
    /// those a day old (as `hf cache prune` waits).
    @Test func partialDownloadsAreChartedAndOnlyOldOnesOfferedForPruning() async throws {
        try await ScreensFixture.with { fixture in
            let manager = fixture.downloads.manager
            _ = try await manager.download(try RepoID("acme/chat")).result()
            let blobs = manager.cache.root.appendingPathComponent("models--acme--chat/blobs")
            let old = blobs.appendingPathComponent("aaaa.incomplete")
            let young = blobs.appendingPathComponent("bbbb.incomplete")
            try Data(count: 3000).write(to: old)
            try Data(count: 5000).write(to: young)
            let now = Date()
            try FileManager.default.setAttributes(
                [.modificationDate: now.addingTimeInterval(-2 * 86_400)], ofItemAtPath: old.path)

            let screen = await StorageScreen.load(manager, now: now)
            #expect(screen.detached.removes == ["acme/chat: \(old.path)"], "\(screen.detached.removes)")
            #expect(screen.detached.freedBytes == 3000)
            let bar = screen.chart?.bars.first { $0.label == "acme/chat" }
            let partial = bar?.pieces.filter { $0.kind == .partial }.map(\.bytes) ?? []
            #expect(partial.reduce(0, +) == 8000, "both partial downloads are charted: \(partial)")
            // The summary names them, so it adds up to the chart's whole cache.
            #expect(
                screen.totalText == "1 repository, 1.0 MiB, and 7.8 KiB of partial downloads", "\(screen.totalText)")
            let whole = screen.chart?.bars.first { $0.label == "Whole cache" }
            #expect(whole.map { $0.pieces.reduce(0) { $0 + $1.bytes } } == screen.totalBytes + 8000)
        }
    }
    /// What a background session is handed comes from the manager: one file's size, ETag and location, asked of a
    /// real server; a path that climbs out of the repository is refused before anything is sent; `isPinned` follows
    /// `pin` and `unpin`.
    @Test func oneFilesMetadataAndPinsThroughTheManager() async throws {
        try await ScreensFixture.with { fixture in
            let manager = fixture.downloads.manager
            let repo = try RepoID("acme/chat")
            let file = try await manager.fileMetadata(repo, path: "weights.bin")
            #expect(file.size == Int64(ScreensFixture.weights.count))
            #expect(file.etag == SampleData.sha256(ScreensFixture.weights) && file.sha256 == file.etag)
            #expect(file.location.path.hasSuffix("/weights.bin") && file.commit.count == 40)
            let before = fixture.sent.paths.count
            for (path, revision) in [("../x/secret", "main"), ("/etc/passwd", "main"), ("", "main"), ("a.bin", "..")] {
                let error = await #expect(throws: ModelDepotError.self) {
                    try await manager.fileMetadata(repo, revision: revision, path: path)
                }
                #expect(error?.code == .invalidArgument, "\(path) at \(revision): \(String(describing: error))")
            }
            #expect(fixture.sent.paths.count == before, "nothing was sent for a path or revision that is refused")
            let missing = await #expect(throws: ModelDepotError.self) {
                try await manager.fileMetadata(repo, path: "missing.bin")
            }
            #expect(missing?.code == .entryNotFound, "\(String(describing: missing))")
            let config = try await manager.fileMetadata(repo, path: "config.json")
            #expect(config.sha256 == nil, "a small file's ETag is a git blob id: \(config.etag)")

            #expect(!manager.isPinned(repo))
            _ = try await manager.download(repo).result()
            try manager.pin(repo)
            let other = try RepoID("acme/embed")
            #expect(manager.isPinned(repo) && !manager.isPinned(other))
            manager.unpin(repo)
            #expect(!manager.isPinned(repo))
        }
    }
}
