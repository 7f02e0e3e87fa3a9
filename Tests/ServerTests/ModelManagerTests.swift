import Foundation
import ModelDepot
import ModelDepotTesting
import Synchronization
import Testing

/// The app-facing manager over our mirror: observable tasks, sharing, pause/resume, cache management.
@Suite struct ModelManagerTests {
    static let weights = SampleData.bytes(count: 8 << 20, seed: 17)
    static let layout: [String: [UInt8]] = [
        "acme/chat/model-q4.gguf": weights, "acme/chat/config.json": Array(#"{"n": 1}"#.utf8),
        "acme/chat/README.md": Array("# chat\n".utf8),
    ]

    func manager(_ hub: HubFixture, clock: any Clock<Duration> = ImmediateClock()) -> ModelManager {
        var configuration = HubFixture.immediateConfiguration
        configuration.progressInterval = .zero
        return ModelManager(
            pull: SnapshotDownloader(
                hub: HubClient(
                    endpoint: hub.mirror.baseURL, transport: DefaultTransport.shared, clock: ImmediateClock()),
                cache: hub.cache,
                downloader: Downloader(configuration: configuration), clock: clock))
    }

    /// A staged pull (`stage`, then `publish`): nothing is loadable until it is published, then the revision is.
    @Test func aStagedPullIsInvisibleUntilPublished() async throws {
        try await HubFixture.with(Self.layout) { hub in
            let models = manager(hub)
            let id = try RepoID("acme/chat")
            let staged = try await models.stage(SnapshotRequest(repo: id))
            #expect(Set(staged.files.map(\.value)) == ["README.md", "config.json", "model-q4.gguf"])
            let weights = try #require(staged.url(of: try RepoFilePath("model-q4.gguf")))
            #expect(try Data(contentsOf: weights) == Data(Self.weights), "the verified bytes, in blobs/")
            #expect(!models.isComplete(id), "nothing is linked before publish")
            #expect(models.localPath(id, file: "model-q4.gguf") == nil, "no snapshot file before publish")
            // A staged pull whose blob was removed since (a delete, a prune) is refused, and links nothing.
            let blob = try #require(staged.url(of: try RepoFilePath("config.json")))
            let kept = try Data(contentsOf: blob)
            try FileManager.default.removeItem(at: blob)
            await #expect(throws: ModelDepotError.self) { try await models.publish(staged) }
            #expect(models.localPath(id, file: "config.json") == nil)
            try kept.write(to: blob)
            let snapshot = try await models.publish(staged)
            #expect(snapshot.commit == staged.commit)
            #expect(models.isComplete(id))
        }
    }

    /// What a browse screen and `modeldepot info` show before a download: the commit's files from the Hub, and
    /// offline the list recorded at pull time; `cachedTypes` says under which types a name is cached.
    @Test func listingComesFromTheHubOrTheRecordedTree() async throws {
        try await HubFixture.with(Self.layout) { hub in
            let models = manager(hub)
            let id = try RepoID("acme/chat")
            let online = try await models.listing(id)
            #expect(online.files.map(\.path) == ["README.md", "config.json", "model-q4.gguf"])
            #expect(online.files.last?.size == Int64(Self.weights.count))
            #expect(online.files.last?.sha256 == SampleData.sha256(Self.weights))
            #expect(online.source == hub.mirror.baseURL.absoluteString && online.commit.count == 40)
            #expect(models.cachedTypes(of: id).isEmpty)

            let offline = ModelManager(
                pull: SnapshotDownloader(
                    hub: HubClient(endpoint: hub.mirror.baseURL, offline: true), cache: hub.cache))
            let missing = await #expect(throws: ModelDepotError.self) { try await offline.listing(id) }
            #expect(missing?.code == .notCached)
            _ = try await models.download(id, matching: ["*.json"]).result()
            let recorded = try await offline.listing(id)
            #expect(recorded.source == "cache" && recorded.commit == online.commit && recorded.files == online.files)
            #expect(models.cachedTypes(of: id) == [.model])
        }
    }

    @Test func downloadIsObservableAndTheCacheKnowsTheModel() async throws {
        try await HubFixture.with(Self.layout) { hub in
            let models = manager(hub)
            let id = try RepoID("acme/chat")
            #expect(!models.isComplete(id))
            let task = await models.download(id, matching: ["*.gguf", "*.json"])
            let shared = await models.download(id, matching: ["*.gguf", "*.json"])
            #expect(task === shared, "identical requests in flight share one task")

            let seen = Mutex<[SnapshotProgress]>([])
            for await progress in task.progress { seen.withLock { $0.append(progress) } }
            let snapshot = try await task.result()
            let progress = seen.withLock { $0 }
            let downloading = progress.filter { $0.phase == .downloading }
            #expect(downloading.first?.totalFiles == 2)
            #expect(downloading.first?.totalBytes == Int64(Self.weights.count + 8))
            #expect(downloading.map(\.bytesCompleted) == downloading.map(\.bytesCompleted).sorted())
            #expect(downloading.last?.bytesCompleted == Int64(Self.weights.count + 8))
            #expect(progress.last?.phase == .completed)
            #expect(snapshot.files.map(\.value) == ["config.json", "model-q4.gguf"])

            #expect(models.isComplete(id, matching: ["*.gguf", "*.json"]))
            #expect(!models.isComplete(id), "README.md is not cached, so the whole repo is not complete")
            #expect(models.localPath(id, file: "model-q4.gguf") == snapshot.url(of: try RepoFilePath("model-q4.gguf")))
            #expect(models.localPath(id, file: "README.md") == nil)
            #expect(try await models.cachedModels().map(\.id) == ["acme/chat"])
            #expect(try await models.cacheSize() == Int64(Self.weights.count + 8))

            let next = await models.download(id, matching: ["*.gguf", "*.json"])
            #expect(next !== task, "a finished task is not reused: a new request checks the Hub again")
            #expect(try await next.result().filesDownloaded == 0)
        }
    }

    @Test func theObservableModelFollowsTheTask() async throws {
        try await HubFixture.with(Self.layout) { hub in
            let model = await ObservedModelDownload(manager(hub).download(try RepoID("acme/chat")))
            _ = try await model.task.result()
            let done = await waitUntil { @MainActor in
                if case .completed = model.state { return true }
                return false
            }
            #expect(done)
            let progress = await model.progress
            #expect(progress?.phase == .completed && progress?.filesCompleted == 3 && progress?.totalFiles == 3)
            #expect(progress?.fractionCompleted == 1)
        }
    }

    /// A view that goes releases its observer, which stops following the task (the task stays as it was).
    @Test func anObserverThatGoesEndsItsStream() async throws {
        try await HubFixture.with(Self.layout) { hub in
            let task = await manager(hub).download(try RepoID("acme/chat"))
            await task.pause()
            #expect(await Self.observeBriefly(task), "the observer never followed the task")
            #expect(await waitUntil(timeout: .seconds(10)) { task.stateSubscriberCount == 0 })
            if case .paused = task.state {} else { Issue.record("the task should stay paused, is \(task.state)") }
            await task.cancel()
        }
    }

    /// Makes an observer, waits until it follows `task`, and lets it go on return.
    @MainActor static func observeBriefly(_ task: ModelDownloadTask) async -> Bool {
        let observer = ObservedModelDownload(task)
        let following = await waitUntil { task.stateSubscriberCount == 1 }
        return following && observer.task === task
    }

    @Test func pauseKeepsWhatArrivedAndResumeFinishes() async throws {
        try await HubFixture.with(Self.layout, cdn: [Self.weights]) { hub in
            let cdn = try #require(hub.cdn)
            cdn.inject(.throttle(bytesPerSecond: 1 << 20), times: 1000)
            let models = manager(hub, clock: ContinuousClock())
            let id = try RepoID("acme/chat")
            let task = await models.download(id)
            // What a resume will not fetch again, read through the engine's public API.
            let repository = try hub.repository("acme/chat")
            let sha = SampleData.sha256(Self.weights)
            let path = try RepoFilePath("model-q4.gguf")
            let resumeRequest = { @Sendable (commit: String) in
                DownloadRequest(
                    url: hub.hub.resolveURL(id, revision: commit, path: path), destination: repository.blob(sha)
                ).placingWorkFiles(
                    partial: repository.partialBlob(sha).path,
                    resumeRecord: repository.partialBlob(sha).path + ".json", sharedLock: repository.lockFile(sha).path)
            }
            // Bytes the client wrote and recorded, not bytes the server sent: on a busy machine a megabyte can
            // wait in socket buffers while the client is not scheduled.
            #expect(
                await waitUntil {
                    guard let commit = repository.commit(forRevision: "main") else { return false }
                    return Downloader().resumableBytes(for: resumeRequest(commit)) > 0
                })
            await task.pause()
            guard case .paused(let progress) = task.state else {
                Issue.record("expected paused, got \(task.state)")
                return
            }
            #expect((progress?.bytesCompleted ?? 0) > 0)
            let commit = try #require(repository.commit(forRevision: "main"))
            let kept = Downloader().resumableBytes(for: resumeRequest(commit))
            #expect(kept > 0, "paused data is kept on disk")

            cdn.clearFaults()
            task.resume()
            let snapshot = try await task.result()
            #expect(try Data(contentsOf: snapshot.url(of: path)) == Data(Self.weights))
            // The resumed run fetched only what was missing (the small files included).
            #expect(snapshot.bytesDownloaded <= Int64(Self.weights.count) - kept + 64)
        }
    }

    @Test func progressNeverGoesBackThroughPauseResumeAndCompletion() async throws {
        try await HubFixture.with(Self.layout, cdn: [Self.weights]) { hub in
            let cdn = try #require(hub.cdn)
            cdn.inject(.throttle(bytesPerSecond: 1 << 20), times: 1000)
            let task = await manager(hub, clock: ContinuousClock()).download(try RepoID("acme/chat"))
            // Bound exactly as an app binds a progress bar.
            let seen = Mutex<[SnapshotProgress]>([])
            let watcher = Task { for await progress in task.progress { seen.withLock { $0.append(progress) } } }
            #expect(await waitUntil { seen.withLock { $0.last?.bytesCompleted ?? 0 } > 1 << 20 })
            await task.pause()
            cdn.clearFaults()
            task.resume()
            _ = try await task.result()
            await watcher.value
            let events = seen.withLock { $0 }
            let total = Int64(Self.weights.count + #"{"n": 1}"#.utf8.count + "# chat\n".utf8.count)
            #expect(events.count > 2)
            for (earlier, later) in zip(events, events.dropFirst()) {
                #expect(later.bytesCompleted >= earlier.bytesCompleted, "\(earlier) then \(later)")
                #expect(later.filesCompleted >= earlier.filesCompleted, "\(earlier) then \(later)")
                #expect((later.fractionCompleted ?? 0) >= (earlier.fractionCompleted ?? 0), "\(earlier) then \(later)")
                if earlier.totalBytes != nil { #expect(later.totalBytes == earlier.totalBytes) }
            }
            let last = try #require(events.last)
            #expect(last.phase == .completed && last.bytesCompleted == total && last.totalBytes == total)
            #expect(last.filesCompleted == 3 && last.totalFiles == 3)
        }
    }

    @Test func cancelStopsAndDeleteFreesTheDisk() async throws {
        try await HubFixture.with(Self.layout, cdn: [Self.weights]) { hub in
            let cdn = try #require(hub.cdn)
            cdn.inject(.throttle(bytesPerSecond: 1 << 20), times: 1000)
            let models = manager(hub, clock: ContinuousClock())
            let id = try RepoID("acme/chat")
            let task = await models.download(id)
            #expect(await waitUntil { cdn.bodyBytesSent > 0 })
            await task.cancel()
            guard case .cancelled = task.state else {
                Issue.record("expected cancelled, got \(task.state)")
                return
            }
            cdn.clearFaults()
            _ = try await models.download(id).result()
            #expect(models.isComplete(id))

            // Access times: made old, then marked as used now.
            let old = Date(timeIntervalSinceNow: -86_400 * 30)
            let blob = try hub.repository("acme/chat").blob(SampleData.sha256(Self.weights))
            var times = [
                timespec(tv_sec: Int(old.timeIntervalSince1970), tv_nsec: 0),
                timespec(tv_sec: Int(old.timeIntervalSince1970), tv_nsec: 0),
            ]
            for file in try FileManager.default.contentsOfDirectory(atPath: blob.deletingLastPathComponent().path) {
                _ = utimensat(AT_FDCWD, blob.deletingLastPathComponent().appendingPathComponent(file).path, &times, 0)
            }
            #expect(try await models.cachedModels()[0].lastAccessed < Date(timeIntervalSinceNow: -86_400))
            try models.markAccessed(id)
            #expect(try await models.cachedModels()[0].lastAccessed > Date(timeIntervalSinceNow: -60))

            let freed = try await models.delete(id)
            #expect(freed == Int64(Self.weights.count + 8 + 7))
            #expect(!models.isComplete(id) && models.localPath(id) == nil)
            #expect(try await models.clearCache() == 0)
        }
    }
}

/// The disk check before a pull, with the free space simulated.
@Suite struct DiskPreflightTests {
    @Test func aPullThatCannotFitFailsFirstAndNamesWhatCouldBeEvicted() async throws {
        try await HubFixture.with(ModelManagerTests.layout) { hub in
            // Something else is cached and could make room.
            let other = hub.cache.repository(try RepoID("acme/other"))
            try FileManager.default.createDirectory(at: other.blobsFolder, withIntermediateDirectories: true)
            let bytes = SampleData.bytes(count: 5000, seed: 99)
            try Data(bytes).write(to: other.blob(SampleData.sha256(bytes)))
            try other.link(
                try RepoFilePath("x.bin"), commit: String(repeating: "9", count: 40), toBlob: SampleData.sha256(bytes))

            // A disk with 1000 bytes free, for the pull's check and the engine's alike.
            let pull = hub.downloader(fileSystem: DiskFullFileSystem(availableSpace: 1000))
            let error = await #expect(throws: ModelDepotError.self) {
                try await pull.download(SnapshotRequest(repo: try RepoID("acme/chat")))
            }
            #expect(error?.code == .insufficientDiskSpace)
            #expect(error?.message.contains("acme/other (5000 bytes)") == true, "\(error?.message ?? "")")
            let repository = try hub.repository("acme/chat")
            #expect(!FileManager.default.fileExists(atPath: repository.blobsFolder.path), "nothing was downloaded")
        }
    }

    /// A pull into a plain folder (`--local-dir`) is checked the same way, against the folder's volume.
    @Test func aLocalFolderPullThatCannotFitFailsFirst() async throws {
        try await HubFixture.with(ModelManagerTests.layout) { hub in
            let folder = try TemporaryDirectory(prefix: "modeldepot-localdir-full")
            defer { folder.remove() }
            let pull = hub.downloader(fileSystem: DiskFullFileSystem(availableSpace: 1000))
            let error = await #expect(throws: ModelDepotError.self) {
                try await pull.download(
                    SnapshotRequest(repo: try RepoID("acme/chat"), localDirectory: LocalDirectory(folder.url)))
            }
            #expect(error?.code == .insufficientDiskSpace && error?.remedy == .freeSpace)
            #expect(error?.message.contains(folder.url.path) == true, "\(error?.message ?? "")")
            let written = try FileManager.default.contentsOfDirectory(atPath: folder.url.path)
            #expect(written == [".cache"], "no model file was written: \(written)")
        }
    }
}
