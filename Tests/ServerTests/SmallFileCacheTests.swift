import Foundation
import Logging
import ModelDepot
import ModelDepotPlatform
import ModelDepotTesting
import NIOCore
import Testing

@testable import ModelDepotServer

/// Small files are answered from memory only while they are what was read: kept under the stamp they had, given
/// out only for that stamp, and never kept when read too soon after a change.
@Suite struct SmallFileCacheTests {
    static func served(_ url: URL) throws -> ServedFile {
        let status = try #require(FileStatus(path: url.path))
        return ServedFile(
            path: try RepoFilePath(url.lastPathComponent), diskPath: url.path, size: status.size,
            modified: Date(timeIntervalSince1970: status.modified), gitOID: "", sha256: nil, stamp: FileStamp(status))
    }

    static func text(_ buffer: ByteBuffer?) -> String? { buffer.map { String(buffer: $0) } }

    @Test func bytesAreKeptUnderTheirStampAndReadAgainForAnother() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let url = folder.path("config.json")
        try Data("abc".utf8).write(to: url)
        let first = try Self.served(url)
        let cache = SmallFileCache(wallClock: FolderWalkTests.anHourLater)
        #expect(Self.text(await cache.bytes(of: first)) == "abc")
        try await FolderWalkTests.letTheFileSystemClockTick(folder)
        // Rewritten with the same size and its old modification time: another stamp (its status-change time).
        try Data("xyz".utf8).write(to: url)
        try FileManager.default.setAttributes([.modificationDate: first.modified], ofItemAtPath: url.path)
        let second = try Self.served(url)
        #expect(second.stamp != first.stamp)
        #expect(Self.text(await cache.bytes(of: first)) == "abc", "kept for the stamp it was read under")
        #expect(Self.text(await cache.bytes(of: second)) == "xyz")

        let big = folder.path("big.bin")
        try Data(count: SmallFileCache.largestFile + 1).write(to: big)
        #expect(await cache.bytes(of: try Self.served(big)) == nil, "large files go by sendfile")
    }

    @Test func bytesReadSoonAfterAChangeAreNotKept() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let url = folder.path("config.json")
        try Data("abc".utf8).write(to: url)
        let first = try Self.served(url)
        let changed = try #require(first.stamp?.latestChange)
        let cache = SmallFileCache(wallClock: { changed + 1_000_000 })
        #expect(Self.text(await cache.bytes(of: first)) == "abc")
        try await FolderWalkTests.letTheFileSystemClockTick(folder)
        try Data("xyz".utf8).write(to: url)
        // Not kept, so read again: the file is no longer what the old stamp says.
        #expect(await cache.bytes(of: first) == nil)
    }

    @Test func aMirrorAnswersTheFileAsItIsNow() async throws {
        let root = try TemporaryDirectory(prefix: "modeldepot-mirror")
        defer { root.remove() }
        try FileManager.default.createDirectory(at: root.path("acme/tiny"), withIntermediateDirectories: true)
        let config = root.path("acme/tiny/config.json")
        try Data("{\"a\": 1}".utf8).write(to: config)
        let logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
        let source = FolderRepositorySource(
            root: root.url, index: HashIndex(storePath: nil), logger: logger, wallClock: FolderWalkTests.anHourLater)
        var server = MirrorServer(
            sources: [source], metrics: MirrorMetrics(), token: nil, treePageSize: 1000, logger: logger)
        server.smallFiles = SmallFileCache(wallClock: FolderWalkTests.anHourLater)
        try await MirrorFixture.serving(server, root: root) { mirror in
            let path = "/acme/tiny/resolve/main/config.json"
            for _ in 0..<2 { #expect(try await mirror.get(path).body == Array("{\"a\": 1}".utf8)) }
            let part = try await mirror.get(path, headers: [("Range", "bytes=1-3")])
            #expect(part.status == 206 && part.body == Array("\"a\"".utf8))
            let modified = try #require(
                try FileManager.default.attributesOfItem(atPath: config.path)[.modificationDate] as? Date)
            try await FolderWalkTests.letTheFileSystemClockTick(root)
            try Data("{\"a\": 2}".utf8).write(to: config)
            try FileManager.default.setAttributes([.modificationDate: modified], ofItemAtPath: config.path)
            let changed = try await mirror.get(path)
            #expect(changed.body == Array("{\"a\": 2}".utf8))
            try FileManager.default.removeItem(at: config)
            #expect(try await mirror.get(path).status == 404)
        }
    }
}
