import Foundation
import ModelDepotCache
import ModelDepotCore
import ModelDepotTesting
import Testing

/// Listings reuse a repository's report only while its folders are unchanged.
@Suite struct CacheScanMemoTests {
    /// A cached repository with `files` files in one snapshot, as Python writes it.
    static func write(_ root: URL, repo: String, commit: String, files: [String: String]) throws {
        let folder = root.appendingPathComponent("models--acme--\(repo)")
        let snapshot = folder.appendingPathComponent("snapshots/\(commit)")
        try FileManager.default.createDirectory(
            at: folder.appendingPathComponent("blobs"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(
            at: folder.appendingPathComponent("refs"), withIntermediateDirectories: true)
        try Data(commit.utf8).write(to: folder.appendingPathComponent("refs/main"))
        for (path, text) in files {
            let blob = folder.appendingPathComponent("blobs/\(SampleData.sha256(Array(text.utf8)))")
            try Data(text.utf8).write(to: blob)
            let link = snapshot.appendingPathComponent(path)
            try FileManager.default.createDirectory(
                at: link.deletingLastPathComponent(), withIntermediateDirectories: true)
            let depth = path.split(separator: "/").count + 1
            let target = String(repeating: "../", count: depth) + "blobs/" + blob.lastPathComponent
            try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: target)
        }
    }

    @Test func reportsAreReusedUntilTheRepositoryChanges() throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-scan-memo")
        defer { folder.remove() }
        let commit = String(repeating: "a", count: 40)
        try Self.write(folder.url, repo: "one", commit: commit, files: ["a.txt": "hello", "sub/b.txt": "world!"])
        let cache = HubCache(root: folder.url)
        let memo = CacheScanMemo()
        let scanner = CacheScanner(cache: cache, memo: memo)
        #expect(try scanner.scan().repositories.map(\.files) == [2])

        // A blob rewritten in place is what the memo cannot see: the kept report stands, a plain scan sees it.
        let blob = folder.url.appendingPathComponent(
            "models--acme--one/blobs/\(SampleData.sha256(Array("hello".utf8)))")
        let handle = try FileHandle(forWritingTo: blob)
        try handle.truncate(atOffset: 2)
        try handle.close()
        #expect(try scanner.scan().sizeOnDisk == 11)
        #expect(try CacheScanner(cache: cache).scan().sizeOnDisk == 8)

        // A new file in an existing nested folder whose blob is already there changes only that folder.
        let link = folder.url.appendingPathComponent("models--acme--one/snapshots/\(commit)/sub/c.txt")
        try FileManager.default.createSymbolicLink(
            atPath: link.path, withDestinationPath: "../../../blobs/\(SampleData.sha256(Array("world!".utf8)))")
        #expect(try scanner.scan().repositories.first?.revisions.first?.files == 3)

        // A new repository, a moved ref, a deleted one: each is seen at once.
        try Self.write(folder.url, repo: "two", commit: String(repeating: "b", count: 40), files: ["x": "x"])
        #expect(try scanner.scan().repositories.map(\.id) == ["acme/one", "acme/two"])
        try FileManager.default.removeItem(at: folder.url.appendingPathComponent("models--acme--one"))
        #expect(try scanner.scan().repositories.map(\.id) == ["acme/two"])

        // Kept reports expire.
        let fresh = CacheScanner(cache: cache, memo: CacheScanMemo(maximumAge: .zero))
        #expect(try fresh.scan().sizeOnDisk == 1)
    }
}
