import Foundation
import ModelDepot
import ModelDepotServer
import ModelDepotTesting
import ModelDepotTransfer
import ModelDepotXet
import Synchronization
import Testing

/// `SnapshotDownloader` pulling through Xet from a mirror that speaks it (`serve --xet`): the files come through
/// reconstructions and xorb ranges, byte-exact, into the cache as Python lays it out; a CAS whose bytes are tampered
/// with is caught by the chunk hashes — in `auto` the pull goes on by HTTP, in `always` it fails — and nothing
/// corrupt is ever linked or left looking finished.
@Suite struct XetPullTests {
    static let files: [String: [UInt8]] = [
        "acme/xet/weights.bin": SampleData.bytes(count: 3 << 20, seed: 101),
        "acme/xet/notes.bin": Array(
            (0..<5000).map { "note \($0 % 89): chunks are content-defined\n" }.joined().utf8),
    ]

    /// A mirror serving the files through Xet, once each file's index is built.
    static func withIndexedMirror(_ body: (MirrorFixture, TemporaryDirectory) async throws -> Void) async throws {
        let root = try TemporaryDirectory(prefix: "modeldepot-xet-pull")
        defer { root.remove() }
        try root.write(files)
        try await MirrorFixture.serving(MirrorFixture.xetMirror(root), root: root) { mirror in
            for name in ["weights.bin", "notes.bin"] { try await mirror.waitForXetIndex("acme/xet", name) }
            try await body(mirror, root)
        }
    }

    static func pull(
        _ mirror: MirrorFixture, cache: HubCache, mode: XetMode, transport: any HTTPTransport = DefaultTransport.shared
    ) async throws -> (Snapshot, SnapshotProgress?) {
        var request = SnapshotRequest(repo: try RepoID("acme/xet"))
        request.xet = mode
        let last = Mutex<SnapshotProgress?>(nil)
        let snapshot = try await SnapshotDownloader(
            hub: HubClient(endpoint: mirror.baseURL, transport: transport), cache: cache
        ).download(request) { progress in last.withLock { $0 = progress } }
        return (snapshot, last.withLock { $0 })
    }

    @Test func pullsThroughXetByteExactIntoPythonsLayout() async throws {
        try await Self.withIndexedMirror { mirror, root in
            let cache = HubCache(root: root.path("cache"))
            let (snapshot, progress) = try await Self.pull(mirror, cache: cache, mode: .always)
            for (path, bytes) in Self.files {
                let name = String(path.dropFirst("acme/xet/".count))
                let linked = snapshot.folder.appendingPathComponent(name)
                #expect(try [UInt8](Data(contentsOf: linked)) == bytes, "\(name) arrived byte-exact")
                // The blob is named by the SHA-256, as Python names it, and nothing of the pull is left beside it.
                let blob = linked.resolvingSymlinksInPath()
                #expect(blob.lastPathComponent == SampleData.sha256(bytes))
            }
            let blobs = try FileManager.default.contentsOfDirectory(atPath: snapshot.folder.path + "/../../blobs")
            #expect(blobs.allSatisfy { HubEncoding.isSHA256($0) }, "only finished blobs: \(blobs)")
            #expect(progress?.xetFiles == 2, "both came through Xet: \(String(describing: progress))")
            let total = Self.files.values.reduce(0) { $0 + $1.count }
            let received = progress?.xetBytesFromNetwork ?? 0
            #expect(received >= Int64(total) && received < Int64(total) + 65_536, "stored chunks and headers")
        }
    }

    /// Through a mirror (`HubMirror`) in front of an endpoint that is down: the mirror's own CAS serves the files.
    @Test func pullsThroughXetFromAMirrorInFrontOfTheEndpoint() async throws {
        try await Self.withIndexedMirror { mirror, root in
            var request = SnapshotRequest(repo: try RepoID("acme/xet"))
            request.xet = .always
            let last = Mutex<SnapshotProgress?>(nil)
            let hub = HubClient(
                endpoint: URL(string: "http://127.0.0.1:9")!, mirrors: [HubMirror(endpoint: mirror.baseURL)])
            let snapshot = try await SnapshotDownloader(hub: hub, cache: HubCache(root: root.path("mirrored")))
                .download(request) { progress in last.withLock { $0 = progress } }
            for (path, bytes) in Self.files {
                let name = String(path.dropFirst("acme/xet/".count))
                #expect(try [UInt8](Data(contentsOf: snapshot.folder.appendingPathComponent(name))) == bytes)
            }
            #expect(last.withLock { $0 }?.xetFiles == 2, "both through the mirror's CAS")
        }
    }

    /// `refusePickle` holds for a file the endpoint offers through Xet: the probe refuses it before any fetch, and
    /// nothing of it reaches the cache.
    @Test func aPickleOfferedThroughXetIsRefusedBeforeAnyFetch() async throws {
        let root = try TemporaryDirectory(prefix: "modeldepot-xet-pickle")
        defer { root.remove() }
        // `os.system("id")` as protocol-2 pickle opcodes, then padding: what a hostile pytorch_model.bin starts with.
        let pickle = Array(
            "\u{80}\u{02}cos\nsystem\nq\u{00}X\u{02}\u{00}\u{00}\u{00}idq\u{01}\u{85}q\u{02}Rq\u{03}.".unicodeScalars
                .map { UInt8($0.value) })
        try root.write(["acme/pickled/pytorch_model.bin": pickle + SampleData.bytes(count: 200_000, seed: 151)])
        try await MirrorFixture.serving(MirrorFixture.xetMirror(root), root: root) { mirror in
            try await mirror.waitForXetIndex("acme/pickled", "pytorch_model.bin", timeout: .seconds(90))
            let cache = HubCache(root: root.path("cache"))
            let models = ModelManager(pull: SnapshotDownloader(hub: HubClient(endpoint: mirror.baseURL), cache: cache))
            var request = SnapshotRequest(repo: try RepoID("acme/pickled"))
            request.xet = .always
            let error = await #expect(throws: ModelDepotError.self) {
                _ = try await models.download(request, policy: DownloadPolicy(refusePickle: true)).result()
            }
            #expect(error?.code == .unsafeFormat, "\(String(describing: error))")
            let blobs = cache.root.path + "/models--acme--pickled/blobs"
            let kept = (try? FileManager.default.contentsOfDirectory(atPath: blobs)) ?? []
            #expect(!kept.contains { !$0.hasSuffix(".lock") }, "nothing of it was fetched: \(kept)")
        }
    }

    @Test func aTamperedXorbIsCaughtThenHTTPTakesOverInAutoAndTheAlwaysPullFails() async throws {
        try await Self.withIndexedMirror { mirror, root in
            let tampering = TamperingTransport(base: DefaultTransport.shared)
            let strict = HubCache(root: root.path("strict-cache"))
            await #expect(throws: ModelDepotError.self, "always: a bad chunk fails the pull") {
                _ = try await Self.pull(mirror, cache: strict, mode: .always, transport: tampering)
            }
            #expect(tampering.tampered > 0, "the xorb bytes were tampered with")
            let blobs = strict.root.path + "/models--acme--xet/blobs"
            let left = (try? FileManager.default.contentsOfDirectory(atPath: blobs)) ?? []
            // A sibling's partial (`.incomplete`, verified bytes a later pull resumes from) may be left when the pull
            // stops it mid-way, as on a loaded machine; nothing may be left under a blob's own name.
            #expect(
                !left.contains { !$0.hasSuffix(".lock") && !$0.hasSuffix(".incomplete") },
                "nothing kept where a finished file would be: \(left)")

            let relaxed = HubCache(root: root.path("relaxed-cache"))
            let (snapshot, progress) = try await Self.pull(mirror, cache: relaxed, mode: .auto, transport: tampering)
            for (path, bytes) in Self.files {
                let name = String(path.dropFirst("acme/xet/".count))
                #expect(try [UInt8](Data(contentsOf: snapshot.folder.appendingPathComponent(name))) == bytes)
            }
            #expect(progress?.xetFiles == 0, "both went by HTTP after Xet failed")
        }
    }
}

/// Passes everything through, but flips a byte in the middle of every xorb range a CAS sends.
final class TamperingTransport: HTTPTransport {
    let base: any HTTPTransport
    private let count = Mutex(0)
    var tampered: Int { count.withLock { $0 } }

    init(base: any HTTPTransport) { self.base = base }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        let response = try await base.send(request)
        guard request.url.path.contains("/xet/xorbs/") else { return response }
        var bytes = try await response.body.collect(limit: 128 << 20, from: request.url)
        if !bytes.isEmpty {
            bytes[bytes.count / 2] ^= 0x5a
            count.withLock { $0 += 1 }
        }
        let chunk = BodyChunk(bytes)
        let sent = Mutex(false)
        return TransportResponse(
            status: response.status, headers: response.headers,
            body: TransportBody(makeNext: {
                {
                    sent.withLock { done in
                        defer { done = true }
                        return done ? nil : chunk
                    }
                }
            }))
    }
}
