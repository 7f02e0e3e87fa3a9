import Foundation
import ModelDepot
import ModelDepotTesting
import Synchronization
import Testing

@testable import ModelDepotServer

/// What a pull-through mirror does for a HEAD, for the blob route, and what its byte counter shows mid-pull.
@Suite struct PullThroughRoutesTests {
    typealias Mirror = PullThroughTests

    @Test func aHeadForAFileNotYetHereStartsNoPull() async throws {
        try await Mirror.withMirror(upstreamRate: nil) { _, mirror, cache in
            let head = try await Mirror.get(mirror.url("/acme/tiny/resolve/main/model.safetensors"), method: "HEAD")
            #expect(head.status == 200)
            #expect(head.header("Content-Length") == "\(Mirror.weights.count)")
            #expect(head.header("ETag") == "\"\(SampleData.sha256(Mirror.weights))\"")
            #expect(try await Mirror.metric("modeldepot_upstream_pulls_total", of: mirror) == 0)
            let blob = cache.appendingPathComponent("models--acme--tiny/blobs/\(SampleData.sha256(Mirror.weights))")
            #expect(!FileManager.default.fileExists(atPath: blob.path))
        }
    }

    @Test func theBlobRoutePullsThroughLikeAResolve() async throws {
        try await Mirror.withMirror(upstreamRate: nil) { _, mirror, cache in
            _ = try await Mirror.commit(of: mirror)  // the mirror learns of the repository
            let sha256 = SampleData.sha256(Mirror.weights)
            let first = try await Mirror.get(mirror.url("/\(sha256)"))
            #expect(first.status == 200)
            #expect(first.body == Mirror.weights)
            #expect(try await Mirror.metric("modeldepot_upstream_pulls_total", of: mirror) == 1)
            let blob = cache.appendingPathComponent("models--acme--tiny/blobs/\(sha256)")
            #expect(FileManager.default.fileExists(atPath: blob.path))

            let again = try await Mirror.get(mirror.url("/\(sha256)"))
            #expect(again.body == Mirror.weights)
            #expect(again.header("Cache-Control") == "public, max-age=31536000, immutable")
            #expect(try await Mirror.metric("modeldepot_upstream_pulls_total", of: mirror) == 1)
            #expect(try await Mirror.metric("modeldepot_cache_hits_total", of: mirror) == 1)
        }
    }

    @Test func upstreamBytesAreCountedAsTheyArrive() async throws {
        // The upstream sends at 512 KB/s: the 2 MiB file takes seconds, and the counter must move meanwhile.
        try await Mirror.withMirror { _, mirror, _ in
            let commit = try await Mirror.commit(of: mirror)
            let download = Task {
                try await Mirror.get(mirror.url("/acme/tiny/resolve/\(commit)/model.safetensors")).body
            }
            let moving = await waitUntil(timeout: .seconds(60)) {
                let bytes = (try? await Mirror.metric("modeldepot_upstream_bytes_total", of: mirror)) ?? -1
                let inFlight = (try? await Mirror.metric("modeldepot_upstream_pulls_in_flight", of: mirror)) ?? -1
                return inFlight == 1 && bytes > 0 && bytes < Mirror.weights.count
            }
            #expect(moving, "the byte counter showed nothing while the pull ran")
            #expect(try await download.value == Mirror.weights)
            #expect(try await Mirror.metric("modeldepot_upstream_bytes_total", of: mirror) == Mirror.weights.count)
        }
    }
}

/// The race that cost the fleet a second upstream copy: a request looks for a blob just before the pull that
/// writes it finishes, and reaches the pull table just after that pull has left it.
@Suite struct BlobPullsRaceTests {
    @Test func aRequestArrivingAfterAPullFinishedFindsTheBlobInsteadOfPullingAgain() async throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-blobpulls")
        defer { folder.remove() }
        let blob = folder.path("blob").path
        let pulls = BlobPulls(metrics: MirrorMetrics(), logger: PullThroughTests.quiet)
        let started = Mutex(0)
        let first = try pulls.follow(
            etag: "e", repository: "r", size: 4, partialPath: blob + ".incomplete", blobPath: blob
        ) { _ in
            started.withLock { $0 += 1 }
            try Data([1, 2, 3, 4]).write(to: URL(fileURLWithPath: blob))
            return 4
        }
        #expect(first != nil)
        // The first pull is over and gone from the table (its blob in place).
        #expect(await waitUntil { pulls.repositories.isEmpty })
        let second = try pulls.follow(
            etag: "e", repository: "r", size: 4, partialPath: blob + ".incomplete", blobPath: blob
        ) { _ in
            started.withLock { $0 += 1 }
            return 4
        }
        #expect(second == nil, "the blob is here: nothing to pull")
        #expect(started.withLock { $0 } == 1)
    }
}
