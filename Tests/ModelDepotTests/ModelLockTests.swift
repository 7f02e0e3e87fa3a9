import Foundation
import ModelDepot
import ModelDepotTesting
import Testing

@Suite struct ModelLockTests {
    static let lock = ModelLock(repositories: [
        ModelLock.Repository(
            endpoint: "https://huggingface.co", repo: try! RepoID("zeta/b"), revision: "main",
            commit: String(repeating: "c", count: 40), source: .init(catalog: "b"),
            files: [
                .init(path: "weights.bin", size: 10, sha256: String(repeating: "1", count: 64)),
                .init(path: "config.json", size: 2, gitBlob: String(repeating: "2", count: 40)),
            ]),
        ModelLock.Repository(
            endpoint: "https://huggingface.co", repo: try! RepoID("alpha/a"), revision: "v1",
            commit: String(repeating: "d", count: 40), source: .init(include: ["*.gguf"]),
            files: [.init(path: "a.gguf", size: 3, sha256: String(repeating: "3", count: 64))]),
    ])

    @Test func aLockIsSortedAndReadsBackAsWritten() throws {
        #expect(Self.lock.repositories.map(\.repo.description) == ["alpha/a", "zeta/b"])
        #expect(Self.lock.repositories[1].files.map(\.path) == ["config.json", "weights.bin"])
        let data = Self.lock.encoded()
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.hasSuffix("}\n") && text.contains(#""version" : 1"#))
        // An entry's keys are sorted and the empty pattern lists are left out.
        #expect(text.contains(#""source" : {"#) && !text.contains(#""exclude""#))
        let read = try ModelLock.parse(data)
        #expect(read == Self.lock && read.encoded() == data)
        #expect(read.repositories[1].totalBytes == 12)
    }

    @Test func aRepositoryLockedTwiceIsRefused() {
        var twice = Self.lock
        twice.repositories.append(twice.repositories[0])
        #expect(twice.problem == "alpha/a is locked twice")
        #expect(throws: ModelDepotError.self) { try ModelLock.parse(twice.encoded()) }
    }

    /// The copy an import makes: digests of what landed, across chunk boundaries, and of an empty file.
    @Test func aVerifyingCopyHashesWhatItWrote() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("md-copy-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        for size in [0, 1, (8 << 20) + 12_345, 17 << 20] {
            let source = folder.appendingPathComponent("source-\(size)")
            try Data(SampleData.bytes(count: size, seed: UInt64(size))).write(to: source)
            let copy = folder.appendingPathComponent("copy-\(size)")
            let sha = try VerifyingCopy.copy(from: source.path, to: copy.path, computing: .sha256)
            let expected = try FileDigests.sha256(ofFileAt: source.path)
            #expect(sha.bytes == Int64(size) && sha.digest == expected)
            let copied = try Data(contentsOf: copy)
            #expect(try copied == Data(contentsOf: source))
            let git = try VerifyingCopy.copy(
                from: source.path, to: copy.path, computing: .gitBlob(expectedSize: Int64(size)))
            let blobID = try FileDigests.gitBlobID(ofFileAt: source.path)
            #expect(git.digest == blobID, "size \(size)")
        }
        #expect(throws: (any Error).self) {
            try VerifyingCopy.copy(
                from: folder.appendingPathComponent("missing").path, to: folder.appendingPathComponent("x").path,
                computing: .sha256)
        }
    }

    /// A lock's progress never goes back, counts the repository in flight by its own fraction, and ends complete.
    @Test func lockProgressAddsUpRepositoriesAndTheOneInFlight() throws {
        let repo = try RepoID("acme/one")
        var half = SnapshotProgress(phase: .downloading)
        half.bytesCompleted = 50
        half.totalBytes = 100
        let second = LockProgress(repositoriesCompleted: 1, totalRepositories: 2, repository: repo, current: half)
        #expect(second.fractionCompleted == 0.75)
        #expect(LockProgress(repositoriesCompleted: 0, totalRepositories: 0).fractionCompleted == nil)

        // A restarted pull reports "nothing known yet" for the same repository: the figures shown stay.
        let restarted = LockProgress(
            repositoriesCompleted: 0, totalRepositories: 2, repository: repo,
            current: SnapshotProgress(phase: .resolving))
        let shown = restarted.continuing(from: second)
        #expect(shown.repositoriesCompleted == 1 && shown.current?.bytesCompleted == 50)
        #expect(shown.fractionCompleted == 0.75)

        // Another repository at a lower fraction (a resumed run re-listing the first): the figures stay.
        let relisted = LockProgress(
            repositoriesCompleted: 0, totalRepositories: 2, repository: try RepoID("acme/zero"),
            current: SnapshotProgress(phase: .downloading, bytesCompleted: 100, totalBytes: 100))
        #expect(relisted.continuing(from: second) == second)
        let further = LockProgress(repositoriesCompleted: 2, totalRepositories: 2)
        #expect(further.continuing(from: second) == further)

        let done = LockProgress.completed(after: second, output: [])
        #expect(done == LockProgress(repositoriesCompleted: 2, totalRepositories: 2))
        #expect(done.fractionCompleted == 1)
    }
}
