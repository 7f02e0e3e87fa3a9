import Foundation
import Testing

@testable import ModelDepot

/// Staged pulls joined for one publish (the signature and the model of a signed pull).
@Suite struct StagedSnapshotTests {
    static func staged(_ path: String, commit: String, fromCache reason: String?) throws -> StagedSnapshot {
        let file = try RepoFilePath(path)
        return StagedSnapshot(
            request: SnapshotRequest(repo: try RepoID("acme/tiny")), commit: commit, tree: nil,
            locations: [file: URL(fileURLWithPath: "/blobs/\(path)")], blobs: reason == nil ? [file: "e-\(path)"] : [:],
            filesDownloaded: reason == nil ? 1 : 0, bytesDownloaded: reason == nil ? 10 : 0,
            answeredFromCacheBecause: reason)
    }

    @Test func joinedStagesArePublishedUnlessBothCameFromTheCache() throws {
        let commit = String(repeating: "a", count: 40)
        // The signature answered from the cache (the Hub was unreachable), the model then downloaded: the model's
        // files must still be linked and the ref moved, so the join is not "from the cache".
        let mixed = try Self.staged("model.sig", commit: commit, fromCache: "unreachable")
            .adding(try Self.staged("weights.bin", commit: commit, fromCache: nil))
        #expect(mixed.answeredFromCacheBecause == nil)
        #expect(mixed.files.map(\.value) == ["model.sig", "weights.bin"] && mixed.blobs.count == 1)
        #expect(mixed.filesDownloaded == 1 && mixed.bytesDownloaded == 10)
        let cached = try Self.staged("model.sig", commit: commit, fromCache: "offline")
            .adding(try Self.staged("weights.bin", commit: commit, fromCache: "offline"))
        #expect(cached.answeredFromCacheBecause == "offline")
        // Two different commits are never published as one.
        #expect(throws: ModelDepotError.self) {
            try Self.staged("a", commit: commit, fromCache: nil)
                .adding(try Self.staged("b", commit: String(repeating: "b", count: 40), fromCache: nil))
        }
    }
}
