import Foundation
import ModelDepot
import ModelDepotTesting
import Testing

@testable import ModelDepotServer

@Suite struct HashIndexTests {
    static func stat(_ path: String) -> (size: Int64, modified: Int64, inode: UInt64) {
        let attributes = try? FileManager.default.attributesOfItem(atPath: path)
        let size = (attributes?[.size] as? NSNumber)?.int64Value ?? 0
        let modified = Int64(((attributes?[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0) * 1e9)
        let inode = (attributes?[.systemFileNumber] as? NSNumber)?.uint64Value ?? 0
        return (size, modified, inode)
    }

    @Test func concurrentRequestsShareOneResultAndTheIndexPersists() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let bytes = SampleData.bytes(count: 1 << 20, seed: 71)
        let file = folder.path("w.gguf").path
        try Data(bytes).write(to: URL(fileURLWithPath: file))
        let store = folder.path("state/index.json").path
        let index = HashIndex(storePath: store)
        let info = Self.stat(file)
        let results = try await withThrowingTaskGroup(of: HashIndex.Entry.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    try await index.digests(
                        ofFileAt: file, size: info.size, modifiedNanoseconds: info.modified, inode: info.inode,
                        lfs: true)
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.count == 8)
        #expect(Set(results.map(\.sha256)) == [SampleData.sha256(bytes)])
        index.save()

        // A new index loads the saved digests: no file access is needed for an unchanged file.
        try FileManager.default.removeItem(atPath: file)
        let reloaded = try await HashIndex(storePath: store).digests(
            ofFileAt: file, size: info.size, modifiedNanoseconds: info.modified, inode: info.inode, lfs: true)
        #expect(reloaded.sha256 == SampleData.sha256(bytes))

        // A changed file (other size or time) is hashed again.
        let missing = await #expect(throws: ModelDepotError.self) {
            try await HashIndex(storePath: store).digests(
                ofFileAt: file, size: info.size + 1, modifiedNanoseconds: info.modified, inode: info.inode, lfs: true)
        }
        #expect(missing?.code == .fileSystem)
    }
}
