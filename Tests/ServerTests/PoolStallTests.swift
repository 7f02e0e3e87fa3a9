import Foundation
import ModelDepot
import ModelDepotTesting
import Synchronization
import Testing

/// Blocking work never keeps a server in the same process from answering.
///
/// Swift's cooperative pool has one thread per core and never grows when its threads block: measured on this
/// toolchain, with both threads of a 2-core machine blocked (in `sleep`, in a CPU loop), a third task waited
/// until one of them returned. Every in-process server, download and test shares those threads, and NIO hands
/// accepted connections to tasks on them: while they are blocked, a server's port accepts connections (NIO's
/// event loop and the kernel's backlog do that) and answers none.
@Suite struct PoolStallTests {
    /// The product's own verification (the web app's and `modeldepot verify`'s "re-hash every blob"), as many at
    /// once as the pool has threads, while an in-process mirror answers API calls. When verification hashed on
    /// the pool, the API calls waited until a verification ended (seconds per gigabyte).
    @Test func apiCallsAreAnsweredWhileTheSameProcessVerifiesGigabytes() async throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-stall")
        defer { folder.remove() }
        let cache = HubCache(root: folder.path("cache"))
        let width = ProcessInfo.processInfo.activeProcessorCount
        let repos = try (0..<width).map { index in
            let repo = try RepoID("acme/big-\(index)")
            try Self.cacheSparseModel(repo, in: cache, size: 1 << 30)
            return repo
        }
        let models = ModelManager(managingCache: .init(cache: cache))

        try await MirrorFixture.with(["acme/tiny/config.json": Array("{}".utf8)]) { mirror in
            let finished = Counter()
            let verifications = repos.map { repo in
                Task {
                    _ = try? await models.verify(repo)
                    finished.add()
                }
            }
            let started = ContinuousClock.now
            let reply = try await mirror.get("/api/models/acme/tiny")
            let waited = ContinuousClock.now - started
            #expect(reply.status == 200)
            // Each verification reads 1 GiB (seconds of a core, more in a debug build): none has ended when the
            // API call is answered, unless the call waited for them. (In a full parallel run other tests' own
            // synchronous work also takes the pool's threads for seconds at a time: that is why one call, not a
            // latency bound, is asked for.)
            #expect(finished.value == 0, "the API call waited for the verifications (\(waited))")
            print("PoolStallTests: the API call waited \(waited) while \(width) verifications ran")
            for verification in verifications { await verification.value }
            #expect(finished.value == width)
        }
    }

    /// A cached repository whose one file is a sparse blob of `size` bytes (no disk written) under a name that is
    /// not its digest: verification reads all of it and reports it corrupt.
    static func cacheSparseModel(_ repo: RepoID, in cache: HubCache, size: Int64) throws {
        let repository = cache.repository(repo)
        let commit = String(repeating: "c", count: 40)
        let blob = repository.blobsFolder.appendingPathComponent(String(repeating: "a", count: 64))
        let snapshot = repository.snapshotsFolder.appendingPathComponent(commit)
        for folder in [repository.blobsFolder, snapshot, repository.folder.appendingPathComponent("refs")] {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        }
        FileManager.default.createFile(atPath: blob.path, contents: nil)
        let handle = try FileHandle(forWritingTo: blob)
        try handle.truncate(atOffset: UInt64(size))
        try handle.close()
        try FileManager.default.createSymbolicLink(
            atPath: snapshot.appendingPathComponent("weights.bin").path,
            withDestinationPath: "../../blobs/" + blob.lastPathComponent)
        try Data(commit.utf8).write(to: repository.folder.appendingPathComponent("refs/main"))
    }
}

/// How many of the blocking tasks have ended.
private final class Counter: Sendable {
    private let count = Mutex(0)
    func add() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}
