import Foundation
import ModelDepot
import ModelDepotTesting
import ModelDepotXet
import Synchronization
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

    /// A pull killed after its first range resumes from the record it left: the terms it wrote are taken from the
    /// partial file (each chunk re-hashed), and only the rest is fetched.
    @Test func aCancelledPullResumesTermByTerm() async throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-xet-resume")
        defer { folder.remove() }
        let cas = try await ScriptedHTTPServer.start()
        defer { Task { try await cas.shutdown() } }
        let twoRanges = TwoRanges(cas: cas, seeds: (131, 132))
        let (chunks, plan, file) = (twoRanges.chunks, twoRanges.plan, twoRanges.file)
        let reply = twoRanges.reply
        func pull() -> XetPull { twoRanges.pull(into: folder, token: "t") }
        // The first pull writes the first range, then hangs on the second and is cancelled (as a kill would stop it).
        cas.enqueue(.json(plan), reply(0), .init(status: 206, headers: [], steps: [.hang]))
        let first = Task { try await pull().run() }
        let recorded = await waitUntil(timeout: .seconds(30)) {
            FileManager.default.fileExists(atPath: folder.path("file.incomplete.json").path)
        }
        try #require(recorded, "the first range was recorded")
        await cas.waitForRequests(3)  // The second range asked for, and hanging.
        first.cancel()
        let stopped = await #expect(throws: ModelDepotError.self) { _ = try await first.value }
        #expect(stopped?.code == .cancelled, "\(String(describing: stopped))")
        #expect(FileManager.default.fileExists(atPath: folder.path("file.incomplete").path), "the partial is kept")
        // The second pull fetches the second range only.
        let before = cas.requests.count
        cas.enqueue(.json(plan), reply(1))
        let outcome = try await pull().run()
        #expect(try [UInt8](Data(contentsOf: folder.path("file"))) == file)
        #expect(cas.requests.count - before == 2, "the reconstruction and the second range only")
        #expect(outcome.bytesFromDisk == Int64(chunks[0].count), "the first term came from the partial file")
        #expect(Self.leftovers(folder) == ["file"], "\(Self.leftovers(folder))")
    }

    /// A CAS whose token (or signed xorb URL) expires mid-file: the pull asks for a fresh token once, asks for the
    /// reconstruction again and fetches only what is missing; refused again, it fails clearly and leaves nothing.
    @Test(arguments: [true, false])
    func anExpiredTokenIsRefreshedOnceThenFailsClearly(refreshHelps: Bool) async throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-xet-expiry")
        defer { folder.remove() }
        let cas = try await ScriptedHTTPServer.start()
        defer { Task { try await cas.shutdown() } }
        let twoRanges = TwoRanges(cas: cas, seeds: (141, 142))
        let (chunks, plan, file) = (twoRanges.chunks, twoRanges.plan, twoRanges.file)
        let reply = twoRanges.reply
        let expired = ScriptedHTTPServer.Reply.json(#"{"error": "expired"}"#, status: 403)
        cas.enqueue(.json(plan), reply(0), expired, .json(plan))
        cas.enqueue(refreshHelps ? reply(1) : expired)
        let refreshes = Mutex(0)
        var pull = twoRanges.pull(into: folder, token: "old")
        pull.refreshAccess = {
            refreshes.withLock { $0 += 1 }
            return XetAccess(casURL: cas.baseURL, token: "fresh", expires: Date().addingTimeInterval(600))
        }
        if refreshHelps {
            let outcome = try await pull.run()
            #expect(try [UInt8](Data(contentsOf: folder.path("file"))) == file)
            #expect(outcome.bytesFromDisk == Int64(chunks[0].count), "the first range was not fetched again")
            #expect(cas.requests[3].header("Authorization") == "Bearer fresh")
            #expect(cas.requests.count == 5)
        } else {
            let error = await #expect(throws: ModelDepotError.self) { _ = try await pull.run() }
            #expect(
                error?.code == .unauthorized && error?.message.contains("fresh token") == true,
                "\(String(describing: error))")
            #expect(Self.leftovers(folder).isEmpty, "\(Self.leftovers(folder))")
        }
        #expect(refreshes.withLock { $0 } == 1, "one fresh token, no more")
    }
}

/// A file of two chunks, each alone in its xorb: a plan of two terms and two ranges, both at `cas`, and the
/// scripted answer for each range.
struct TwoRanges {
    let cas: ScriptedHTTPServer
    let chunks: [[UInt8]]
    let stored: [[UInt8]]
    let plan: String

    init(cas: ScriptedHTTPServer, seeds: (UInt64, UInt64)) {
        self.cas = cas
        chunks = [SampleData.bytes(count: 40_000, seed: seeds.0), SampleData.bytes(count: 30_000, seed: seeds.1)]
        let xorbs = chunks.map { XetHash.xorb([(XetHash.chunk($0), UInt64($0.count))]).description }
        let stored = chunks.map { XorbChunks.stored($0) }
        self.stored = stored
        let (chunks, base) = (chunks, cas.baseURL.absoluteString)
        let terms = chunks.indices.map {
            #"{"hash": "\#(xorbs[$0])", "unpacked_length": \#(chunks[$0].count), "range": {"start": 0, "end": 1}}"#
        }
        let fetches = chunks.indices.map {
            #""\#(xorbs[$0])": [{"range": {"start": 0, "end": 1}, "url": "\#(base)/x\#($0)", "url_range": {"start": 0, "end": \#(stored[$0].count - 1)}}]"#
        }
        plan = #"{"terms": [\#(terms.joined(separator: ","))], "fetch_info": {\#(fetches.joined(separator: ","))}}"#
    }

    var file: [UInt8] { chunks[0] + chunks[1] }

    func reply(_ index: Int) -> ScriptedHTTPServer.Reply {
        .init(status: 206, headers: [("Content-Length", "\(stored[index].count)")], steps: [.sendBytes(stored[index])])
    }

    /// The pull of the file into `folder/file`, one range at a time, with the Hub elsewhere.
    func pull(into folder: TemporaryDirectory, token: String) -> XetPull {
        XetPull(
            hub: HubClient(endpoint: URL(string: "http://127.0.0.1:9")!),
            access: XetAccess(casURL: cas.baseURL, token: token, expires: Date().addingTimeInterval(600)),
            fileHash: XetHash.file(chunks.map { (XetHash.chunk($0), UInt64($0.count)) }).description,
            size: Int64(file.count), expectedSHA256: SampleData.sha256(file), destination: folder.path("file"),
            partialPath: folder.path("file.incomplete").path, connections: 1)
    }
}
