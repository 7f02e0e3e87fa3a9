import Foundation
import ModelDepot
import ModelDepotTesting
import Testing

@Suite struct StorageBudgetTests {
    /// Three repositories of 1000, 2000 and 3000 bytes, last used 3, 2 and 1 days ago.
    static func makeCache() throws -> (TemporaryDirectory, HubCache) {
        let folder = try TemporaryDirectory(prefix: "modeldepot-budget")
        let cache = HubCache(root: folder.path("cache"))
        for (index, name) in ["old", "middle", "new"].enumerated() {
            let repository = cache.repository(try RepoID("acme/\(name)"))
            let bytes = SampleData.bytes(count: 1000 * (index + 1), seed: UInt64(index + 7))
            try FileManager.default.createDirectory(at: repository.blobsFolder, withIntermediateDirectories: true)
            let blob = repository.blob(SampleData.sha256(bytes))
            try Data(bytes).write(to: blob)
            let commit = String(repeating: "\(index + 1)", count: 40)
            try repository.link(try RepoFilePath("model.bin"), commit: commit, toBlob: SampleData.sha256(bytes))
            try repository.setRef("main", to: commit)
            let used = Int(Date().timeIntervalSince1970) - 86_400 * (3 - index)
            var times = [timespec(tv_sec: used, tv_nsec: 0), timespec(tv_sec: used, tv_nsec: 0)]
            _ = utimensat(AT_FDCWD, blob.path, &times, 0)
        }
        return (folder, cache)
    }

    @Test func evictsLeastRecentlyUsedFirstAndNeverPinned() throws {
        let (folder, cache) = try Self.makeCache()
        defer { folder.remove() }
        let budget = StorageBudget(cache: cache)
        let dry = try budget.plan(maxSize: 4000)
        #expect(dry.evicted.map(\.id) == ["acme/old", "acme/middle"])
        #expect(dry.sizeBefore == 6000 && dry.sizeAfter == 3000 && !dry.stillOver)

        try PinStore(cache: cache).pin(try RepoID("acme/old"))
        let pinned = try budget.plan(maxSize: 4000)
        #expect(pinned.evicted.map(\.id) == ["acme/middle"] && pinned.sizeAfter == 4000)
        try pinned.execute()
        #expect(try CacheScanner(cache: cache).scan().repositories.map(\.id) == ["acme/new", "acme/old"])

        let tooSmall = try budget.plan(maxSize: 10)
        #expect(tooSmall.evicted.map(\.id) == ["acme/new"] && tooSmall.stillOver)
        #expect(throws: ModelDepotError.self) { try PinStore(cache: cache).pin(try RepoID("acme/absent")) }
    }

    @Test func repositoriesInUseAreSparedEvenWhenLeastRecentlyUsed() throws {
        let (folder, cache) = try Self.makeCache()
        defer { folder.remove() }
        let oldest = cache.repository(try RepoID("acme/old")).folder.lastPathComponent
        let plan = try StorageBudget(cache: cache).plan(maxSize: 1500, sparing: [oldest])
        #expect(plan.evicted.map(\.id) == ["acme/middle", "acme/new"])
        #expect(plan.sizeAfter == 1000 && !plan.stillOver)
        let everything = try StorageBudget(cache: cache).plan(
            maxSize: 10, sparing: Set(["old", "middle", "new"].map { "models--acme--\($0)" }))
        #expect(everything.evicted.isEmpty && everything.stillOver)
    }

    @Test(arguments: [("20GB", 20_000_000_000), ("500 MB", 500_000_000), ("1.5GiB", 1_610_612_736), ("1024", 1024)])
    func sizesParse(text: String, bytes: Int64) throws {
        #expect(try ByteSize.parse(text) == bytes)
    }

    @Test func badSizesAreRefused() {
        for text in ["", "GB", "-1GB", "12 parsecs"] {
            #expect(throws: ModelDepotError.self, "\(text)") { try ByteSize.parse(text) }
        }
    }
}
