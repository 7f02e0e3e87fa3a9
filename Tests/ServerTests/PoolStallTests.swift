import Foundation
import ModelDepot
import ModelDepotTesting
import Synchronization
import Testing

/// Blocking work (hashing gigabytes) never keeps a server in the same process from answering: the product's own
/// "is it already downloaded?" hash of a file runs off Swift's cooperative pool (`BlockingWork`).
///
/// A guard, not a reproduction: on this Linux toolchain libdispatch adds threads when the cooperative ones block,
/// so this test also passed with the hash on the pool (checked: 2.8 s, API calls answered). The stall seen in full
/// test runs is not explained by it; see the notes.
@Suite struct PoolStallTests {
    @Test func apiCallsAreAnsweredWhileTheSameProcessHashesGigabytes() async throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-stall")
        defer { folder.remove() }
        // 512 MiB "already downloaded", sparse (no disk written): the engine hashes it to see whether it is done.
        let weights = folder.path("weights.bin")
        FileManager.default.createFile(atPath: weights.path, contents: nil)
        let handle = try FileHandle(forWritingTo: weights)
        try handle.truncate(atOffset: 512 << 20)
        try handle.close()

        try await MirrorFixture.with(["acme/tiny/config.json": Array("{}".utf8)]) { mirror in
            let finished = FinishedCount()
            // More hashes than the pool has threads, each the product's own check of a file already there.
            let hashes = (0..<4).map { _ in
                Task {
                    let request = DownloadRequest(
                        url: URL(string: "http://127.0.0.1:9/weights.bin")!, destination: weights,
                        expectedSHA256: String(repeating: "0", count: 64))
                    _ = try? await Downloader().download(request)
                    finished.add()
                }
            }
            for _ in 0..<5 {
                let reply = try await mirror.get("/api/models/acme/tiny")
                #expect(reply.status == 200)
            }
            // Each hash takes a second or more of a core: none has finished while five API calls were answered.
            #expect(finished.value == 0, "the API calls waited for the hashes")
            hashes.forEach { $0.cancel() }
            for hash in hashes { await hash.value }
        }
    }
}

/// How many of the hashing tasks have ended.
private final class FinishedCount: Sendable {
    private let count = Mutex(0)
    func add() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}
