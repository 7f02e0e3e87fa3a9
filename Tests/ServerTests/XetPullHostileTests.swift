import Foundation
import ModelDepot
import ModelDepotTesting
import ModelDepotXet
import Testing

/// ``XetPull`` against a CAS that is not the Hub's host and that lies: it gets its own token and never the Hub's
/// (xorb URLs get none), a reconstruction whose terms do not add up to the file is refused before a byte is
/// fetched, and a cut-off xorb range fails the pull — in every case nothing is left where the file would be.
@Suite struct XetPullHostileTests {
    static let chunk = SampleData.bytes(count: 40_000, seed: 111)

    static func reconstruction(_ cas: URL, size: Int, urlEnd: Int) -> String {
        let xorb = XetHash.xorb([(XetHash.chunk(chunk), UInt64(chunk.count))]).description
        return """
            {"offset_into_first_range": 0,
             "terms": [{"hash": "\(xorb)", "unpacked_length": \(size), "range": {"start": 0, "end": 1}}],
             "fetch_info": {"\(xorb)": [{"range": {"start": 0, "end": 1}, "url": "\(cas.absoluteString)/xorb-signed",
                                          "url_range": {"start": 0, "end": \(urlEnd)}}]}}
            """
    }

    static func pull(_ cas: ScriptedHTTPServer, folder: TemporaryDirectory) -> XetPull {
        XetPull(
            // The Hub is elsewhere (nothing listens there): only the CAS is asked anything.
            hub: HubClient(endpoint: URL(string: "http://127.0.0.1:9")!, token: "hub-secret"),
            access: XetAccess(casURL: cas.baseURL, token: "cas-token", expires: Date().addingTimeInterval(600)),
            fileHash: XetHash.file([(XetHash.chunk(chunk), UInt64(chunk.count))]).description,
            size: Int64(chunk.count), expectedSHA256: SampleData.sha256(chunk),
            destination: folder.path("file"), partialPath: folder.path("file.incomplete").path, connections: 2)
    }

    static func leftovers(_ folder: TemporaryDirectory) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: folder.url.path)) ?? []
    }

    @Test func theCASGetsItsOwnTokenAndTheXorbURLNone() async throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-xet-hostile")
        defer { folder.remove() }
        let cas = try await ScriptedHTTPServer.start()
        defer { Task { try await cas.shutdown() } }
        let stored = XorbChunks.stored(Self.chunk)
        cas.enqueue(
            .json(Self.reconstruction(cas.baseURL, size: Self.chunk.count, urlEnd: stored.count - 1)),
            .init(status: 206, headers: [("Content-Length", "\(stored.count)")], steps: [.sendBytes(stored)]))
        _ = try await Self.pull(cas, folder: folder).run()
        #expect(try [UInt8](Data(contentsOf: folder.path("file"))) == Self.chunk)
        let requests = cas.requests
        #expect(requests.count == 2)
        #expect(requests.first?.header("Authorization") == "Bearer cas-token")
        #expect(requests.last?.header("Authorization") == nil, "a xorb URL is the CAS's to sign")
        #expect(
            !requests.contains { $0.headers.contains { $0.1.contains("hub-secret") } }, "the Hub's token stays home")
        #expect(requests.last?.header("Range") == "bytes=0-\(stored.count - 1)")
    }

    @Test func termsThatDoNotAddUpAreRefusedBeforeAnyFetch() async throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-xet-hostile")
        defer { folder.remove() }
        let cas = try await ScriptedHTTPServer.start()
        defer { Task { try await cas.shutdown() } }
        cas.enqueue(.json(Self.reconstruction(cas.baseURL, size: Self.chunk.count + 1, urlEnd: 40_007)))
        let error = await #expect(throws: ModelDepotError.self) { _ = try await Self.pull(cas, folder: folder).run() }
        #expect(error?.code == .protocolViolation, "\(String(describing: error))")
        #expect(cas.requests.count == 1, "no xorb was fetched")
        #expect(Self.leftovers(folder).isEmpty, "\(Self.leftovers(folder))")
    }

    @Test func aCutOffXorbRangeFailsAndLeavesNothing() async throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-xet-hostile")
        defer { folder.remove() }
        let cas = try await ScriptedHTTPServer.start()
        defer { Task { try await cas.shutdown() } }
        let stored = XorbChunks.stored(Self.chunk)
        let cut = Array(stored.prefix(stored.count - 100))
        // The same cut-off answer to every retry.
        let short = ScriptedHTTPServer.Reply(
            status: 206, headers: [("Content-Length", "\(cut.count)")], steps: [.sendBytes(cut)])
        cas.enqueue(.json(Self.reconstruction(cas.baseURL, size: Self.chunk.count, urlEnd: stored.count - 1)))
        for _ in 0..<8 { cas.enqueue(short) }
        await #expect(throws: ModelDepotError.self) { _ = try await Self.pull(cas, folder: folder).run() }
        #expect(Self.leftovers(folder).isEmpty, "\(Self.leftovers(folder))")
    }
}
