import Foundation
import ModelDepot
import ModelDepotTesting
import Testing

/// The cache layout written by hand, then scanned, verified and partly deleted.
@Suite struct CacheLayoutTests {
    /// Two revisions sharing one blob: `main` (shared + one of its own) and `v1` (shared + another).
    static func makeCache() throws -> (TemporaryDirectory, CachedRepository, [String: [UInt8]]) {
        let folder = try TemporaryDirectory(prefix: "modeldepot-layout")
        let cache = HubCache(root: folder.path("cache"))
        let repository = cache.repository(try RepoID("acme/two"))
        let contents: [String: [UInt8]] = [
            "shared": SampleData.bytes(count: 1000, seed: 1), "new": SampleData.bytes(count: 2000, seed: 2),
            "old": SampleData.bytes(count: 3000, seed: 3),
        ]
        try FileManager.default.createDirectory(at: repository.blobsFolder, withIntermediateDirectories: true)
        for bytes in contents.values {
            try Data(bytes).write(to: repository.blob(SampleData.sha256(bytes)))
        }
        let main = String(repeating: "1", count: 40)
        let v1 = String(repeating: "2", count: 40)
        try repository.link(
            try RepoFilePath("a/shared.bin"), commit: main, toBlob: SampleData.sha256(contents["shared"]!))
        try repository.link(try RepoFilePath("new.bin"), commit: main, toBlob: SampleData.sha256(contents["new"]!))
        try repository.link(
            try RepoFilePath("a/shared.bin"), commit: v1, toBlob: SampleData.sha256(contents["shared"]!))
        try repository.link(try RepoFilePath("old.bin"), commit: v1, toBlob: SampleData.sha256(contents["old"]!))
        try repository.setRef("main", to: main)
        try repository.setRef("refs/pr/1", to: v1)
        return (folder, repository, contents)
    }

    @Test func scanCountsEachBlobOncePerRepository() throws {
        let (folder, repository, _) = try Self.makeCache()
        defer { folder.remove() }
        let report = try CacheScanner(cache: repository.cache).scan()
        let repo = try #require(report.repositories.first)
        #expect(repo.id == "acme/two" && repo.type == "model")
        #expect(repo.files == 3 && repo.sizeOnDisk == 6000)
        #expect(repo.revisions.map(\.refs) == [["main"], ["refs/pr/1"]])
        #expect(repo.revisions.map(\.sizeOnDisk) == [3000, 4000])
        #expect(report.sizeOnDisk == 6000 && report.warnings.isEmpty)
    }

    @Test func deletingOneRevisionKeepsBlobsTheOtherUses() throws {
        let (folder, repository, contents) = try Self.makeCache()
        defer { folder.remove() }
        let report = try #require(try CacheScanner(cache: repository.cache).scan().repositories.first)
        let v1 = String(repeating: "2", count: 40)
        let plan = try DeletionPlan(deleting: [v1], of: report)
        #expect(plan.freedBytes == 3000)
        #expect(plan.repositories.isEmpty && plan.snapshots.count == 1 && plan.refs.count == 1)
        try plan.execute()
        #expect(FileManager.default.fileExists(atPath: repository.blob(SampleData.sha256(contents["shared"]!)).path))
        #expect(!FileManager.default.fileExists(atPath: repository.blob(SampleData.sha256(contents["old"]!)).path))
        #expect(repository.commit(forRevision: "refs/pr/1") == nil)
        let after = try #require(try CacheScanner(cache: repository.cache).scan().repositories.first)
        #expect(after.revisions.map(\.commit) == [String(repeating: "1", count: 40)] && after.sizeOnDisk == 3000)

        #expect(throws: ModelDepotError.self) { try DeletionPlan(deleting: [v1], of: after) }
        let all = try DeletionPlan(deleting: nil, of: after)
        #expect(all.repositories == [repository.folder.path])
        try all.execute()
        #expect(try CacheScanner(cache: repository.cache).scan().repositories.isEmpty)
    }

    @Test func verifyFindsCorruptAndMissingFiles() throws {
        let (folder, repository, contents) = try Self.makeCache()
        defer { folder.remove() }
        #expect(try CacheVerifier(cache: repository.cache).verify(repository).problems.isEmpty)
        try Data("tampered".utf8).write(to: repository.blob(SampleData.sha256(contents["new"]!)))
        try FileManager.default.removeItem(at: repository.blob(SampleData.sha256(contents["old"]!)))
        let problems = try CacheVerifier(cache: repository.cache).verify(repository).problems
        #expect(problems.map(\.path.value).sorted() == ["new.bin", "old.bin"])
        #expect(problems.contains { if case .corrupt = $0.kind { $0.path.value == "new.bin" } else { false } })
        #expect(problems.contains { $0.kind == .missing && $0.path.value == "old.bin" })
        // A broken link makes the repository a warning for `scan`, as in Python.
        #expect(try CacheScanner(cache: repository.cache).scan().warnings.count == 1)
    }

    @Test func refsAreExactAndOnlyRewrittenWhenTheyChange() throws {
        let (folder, repository, _) = try Self.makeCache()
        defer { folder.remove() }
        let ref = repository.refsFolder.appendingPathComponent("refs/pr/1")
        #expect(try Data(contentsOf: ref) == Data(String(repeating: "2", count: 40).utf8))
        let before = try FileManager.default.attributesOfItem(atPath: ref.path)[.systemFileNumber] as? Int
        try repository.setRef("refs/pr/1", to: String(repeating: "2", count: 40))
        let after = try FileManager.default.attributesOfItem(atPath: ref.path)[.systemFileNumber] as? Int
        #expect(before == after, "an unchanged ref is not rewritten")
        #expect(throws: ModelDepotError.self) {
            try repository.setRef("../escape", to: String(repeating: "3", count: 40))
        }
    }
}

/// Refs are read one way everywhere (the library, `ls`, the mirror): verbatim, as Python reads them.
@Suite struct CachedRefsTests {
    @Test func refsAreReadVerbatimWithNestedNames() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("modeldepot-refs-\(UUID())")
        defer { try? FileManager.default.removeItem(at: root) }
        let repository = HubCache(root: root).repository(try RepoID("acme/tiny"))
        let commit = String(repeating: "ab", count: 20)
        try repository.setRef("main", to: commit)
        try repository.setRef("refs/pr/1", to: commit)
        try Data((commit + "\n").utf8).write(to: repository.refsFolder.appendingPathComponent("with-newline"))
        #expect(repository.refs() == ["main": commit, "refs/pr/1": commit])
        #expect(repository.commit(forRevision: "with-newline") == nil, "the same rule as refs()")
        #expect(HubCache(root: root).repository(try RepoID("acme/none")).refs().isEmpty)
    }
}
