import Foundation
import ModelDepotServer
import ModelDepotTesting
import ModelDepotXet
import Testing

/// Uploads an attacker crafts against the mirror's CAS: without a write token, under a hash the bytes do not have,
/// cut off, past the quota; shards citing xorbs never uploaded, chunks a xorb does not hold, sizes and file hashes
/// that lie. Each is refused with a status and a reason, and nothing of it is kept or readable afterwards.
@Suite struct MirrorXetUploadAttackTests {
    static func xorb(_ chunks: [[UInt8]]) -> (bytes: [UInt8], hash: XetHash) {
        let hash = XetHash.xorb(chunks.map { (XetHash.chunk($0), UInt64($0.count)) })
        return (chunks.flatMap { XorbChunks.stored($0) }, hash)
    }

    static func message(_ reply: MirrorFixture.Reply) -> String {
        ((reply.json as? [String: Any])?["error"] as? String) ?? String(decoding: reply.body, as: UTF8.self)
    }

    @Test func craftedUploadsAreRefusedAndLeaveNothing() async throws {
        let root = try TemporaryDirectory(prefix: "modeldepot-xet-attack")
        defer { root.remove() }
        try root.write(["acme/up/README.md": [1], "acme/other/README.md": [2]])
        // Three chunks; the honest file cites the first two only.
        let chunks = [
            SampleData.bytes(count: 9000, seed: 91), SampleData.bytes(count: 30_000, seed: 92),
            SampleData.bytes(count: 12_000, seed: 94),
        ]
        let (bytes, hash) = Self.xorb(chunks)
        let kept = root.path(".state/xet/uploads")
        func keptFiles() -> [String] {
            let all = FileManager.default.enumerator(atPath: kept.path)?.allObjects as? [String] ?? []
            return all.filter { !["xorbs", "files"].contains($0) }
        }
        try await MirrorFixture.serving(
            MirrorFixture.xetMirror(root, acceptsUploads: true, uploadLimit: 250_000), root: root
        ) { mirror in
            let write = try await MirrorXetUploadTests.token(mirror, "write", "acme/up")
            let read = try await MirrorXetUploadTests.token(mirror, "read", "acme/up")
            let otherRead = try await MirrorXetUploadTests.token(mirror, "read", "acme/other")
            func post(_ path: String, _ body: [UInt8], token: String? = write) async throws -> MirrorFixture.Reply {
                try await mirror.send(
                    "/xet" + path, headers: token.map { [("Authorization", "Bearer \($0)")] } ?? [], bytes: body)
            }
            let xorbPath = "/v1/xorbs/default/\(hash)"
            // Who may upload.
            #expect(try await post(xorbPath, bytes, token: nil).status == 401)
            #expect(try await post(xorbPath, bytes, token: "forged").status == 401)
            #expect(try await post(xorbPath, bytes, token: read).status == 403, "a read token does not write")
            // What is sent.
            let other = Self.xorb([chunks[0]]).hash
            let wrongHash = try await post("/v1/xorbs/default/\(other)", bytes)
            #expect(
                wrongHash.status == 400 && Self.message(wrongHash).contains("hash to xorb"),
                "\(Self.message(wrongHash))")
            #expect(try await post(xorbPath, Array(bytes.dropLast(10))).status == 400, "cut off")
            #expect(try await post("/v1/xorbs/default/\(String(repeating: "g", count: 64))", bytes).status == 400)
            #expect(try await post("/v1/xorbs/default/\(hash.description.uppercased())", bytes).status == 400)
            #expect(try await post("/v1/xorbs/elsewhere/\(hash)", bytes).status == 400)
            var header = bytes
            header[1] = 0xff
            header[2] = 0xff
            header[3] = 0x7f  // A chunk that says it is 8 MiB long.
            #expect(try await post(xorbPath, header).status == 400)
            #expect(keptFiles().isEmpty, "refused xorbs leave nothing: \(keptFiles())")

            // A good xorb is kept once.
            let first = try await post(xorbPath, bytes)
            #expect(first.status == 200 && (first.json as? [String: Any])?["was_inserted"] as? Bool == true)
            let again = try await post(xorbPath, bytes)
            #expect((again.json as? [String: Any])?["was_inserted"] as? Bool == false)
            // 8192 one-byte chunks: a legal xorb, and the raw material of the amplified shard below.
            let dust = Self.xorb((0..<8192).map { [UInt8(truncatingIfNeeded: $0)] })
            #expect(try await post("/v1/xorbs/default/\(dust.hash)", dust.bytes).status == 200)
            // Past the quota (250 kB): refused, not kept.
            let big = Self.xorb([SampleData.bytes(count: 130_000, seed: 93)])
            #expect(try await post("/v1/xorbs/default/\(big.hash)", big.bytes).status == 507)
            #expect(keptFiles().count == 4, "two xorbs and their layouts: \(keptFiles())")

            // Shards that lie.
            let fileHash = XetHash.file(chunks.prefix(2).map { (XetHash.chunk($0), UInt64($0.count)) })
            let honest = XetShard.File(
                hash: fileHash, segments: [.init(xorb: hash, chunks: 0..<2, unpackedBytes: 39_000)])
            var lies: [(String, XetShard)] = []
            lies.append(
                (
                    "a xorb never uploaded",
                    XetShard(
                        files: [
                            .init(hash: fileHash, segments: [.init(xorb: other, chunks: 0..<2, unpackedBytes: 39_000)])
                        ], xorbs: [])
                ))
            lies.append(
                (
                    "chunks past the xorb",
                    XetShard(
                        files: [
                            .init(hash: fileHash, segments: [.init(xorb: hash, chunks: 0..<3, unpackedBytes: 39_000)])
                        ], xorbs: [])
                ))
            lies.append(
                (
                    "a size that lies",
                    XetShard(
                        files: [
                            .init(hash: fileHash, segments: [.init(xorb: hash, chunks: 0..<2, unpackedBytes: 40_000)])
                        ], xorbs: [])
                ))
            lies.append(
                (
                    "a file hash its chunks do not make",
                    XetShard(
                        files: [
                            .init(hash: other, segments: [.init(xorb: hash, chunks: 0..<2, unpackedBytes: 39_000)])
                        ], xorbs: [])
                ))
            lies.append(
                (
                    "a listed xorb with other chunks",
                    XetShard(
                        files: [honest],
                        xorbs: [
                            .init(hash: hash, chunks: [.init(hash: other, start: 0, length: 9000)], unpackedBytes: 9000)
                        ])
                ))
            // One honest file beside a lie: neither is recorded.
            lies.append(("an honest file beside a lie", XetShard(files: [honest, lies[3].1.files[0]], xorbs: [])))
            for (label, shard) in lies {
                let reply = try await post("/v1/shards", shard.serialized())
                #expect(reply.status == 400, "\(label): \(reply.status) \(Self.message(reply))")
            }
            // A 15 kB shard citing 2.5 million chunks (300 times the dust xorb's 8192): refused before a hash is
            // computed.
            let amplified = XetShard(
                files: [
                    .init(
                        hash: fileHash,
                        segments: Array(
                            repeating: .init(xorb: dust.hash, chunks: 0..<8192, unpackedBytes: 8192), count: 300))
                ], xorbs: [])
            let refusedAmplification = try await post("/v1/shards", amplified.serialized())
            #expect(
                refusedAmplification.status == 400 && Self.message(refusedAmplification).contains("chunks, past"),
                "\(Self.message(refusedAmplification))")
            #expect(try await post("/v1/shards", Array("not a shard".utf8)).status == 400)
            #expect(!keptFiles().contains { $0.hasPrefix("files/") }, "refused shards record nothing: \(keptFiles())")
            #expect(
                try await post("/v1/shards", XetShard(files: [honest], xorbs: []).serialized(), token: read).status
                    == 403)
            let reconstruction = "/xet/v1/reconstructions/\(fileHash)"
            let asReader = [("Authorization", "Bearer \(read)")]
            #expect(try await mirror.get(reconstruction, headers: asReader).status == 404, "no lie was recorded")
            // The honest shard is recorded once, and read back by its repository's token only.
            let recorded = try await post("/v1/shards", XetShard(files: [honest], xorbs: []).serialized())
            #expect(recorded.status == 200 && (recorded.json as? [String: Any])?["result"] as? Int == 1)
            let repeated = try await post("/v1/shards", XetShard(files: [honest], xorbs: []).serialized())
            #expect((repeated.json as? [String: Any])?["result"] as? Int == 0)
            let plan = try await mirror.get(reconstruction, headers: asReader)
            #expect(try await MirrorXetUploadTests.rebuild(plan, mirror) == chunks[0] + chunks[1])
            // The token reads the chunks its files cite, not the rest of the xorb.
            let citedEnd = 9008 + 30_008 - 1
            let xorbURL = "/xet/xorbs/\(hash)?token=\(read)"
            #expect(try await mirror.get(xorbURL, headers: [("Range", "bytes=0-\(citedEnd)")]).status == 206)
            #expect(try await mirror.get(xorbURL, headers: [("Range", "bytes=0-\(citedEnd + 1)")]).status == 403)
            #expect(try await mirror.get(xorbURL).status == 403, "the whole xorb holds a chunk no file cites")
            #expect(
                try await mirror.get(reconstruction, headers: [("Authorization", "Bearer \(otherRead)")]).status == 404)
            #expect(try await mirror.get("/xet/xorbs/\(hash)?token=\(otherRead)").status == 404)
            // The routes hf_xet tries first answer as the Hub's CAS does when it has neither.
            #expect(try await mirror.get("/xet/v1/chunks/default/\(hash)", headers: asReader).status == 404)
            #expect(try await post("/v1/xorb-grants/default/\(hash)", []).status == 404)
            #expect(try await post("/v2/shards", []).status == 404)
        }
    }
}

extension MirrorXetUploadAttackTests {
    /// Two uploads of one xorb at once, one sending its chunk stored and one inside an LZ4 frame: one is kept, and
    /// the layout beside the bytes on disk is theirs.
    @Test func concurrentUploadsOfOneXorbKeepBytesAndLayoutTogether() async throws {
        let root = try TemporaryDirectory(prefix: "modeldepot-xet-race")
        defer { root.remove() }
        try root.write(["acme/up/README.md": [1]])
        let chunk = SampleData.bytes(count: 20_000, seed: 95)
        let (stored, hash) = Self.xorb([chunk])
        // The same chunk in an LZ4 frame of one stored block: a second, valid encoding of the same xorb.
        let header: [UInt8] = [0x60, 0x50]
        var frame: [UInt8] =
            [0x04, 0x22, 0x4d, 0x18] + header + [UInt8(truncatingIfNeeded: XXHash32.hash(header) >> 8)]
        frame += (0..<4).map { UInt8(truncatingIfNeeded: (UInt32(chunk.count) | 0x8000_0000) >> (8 * UInt32($0))) }
        frame += chunk + [0, 0, 0, 0]
        let length = UInt32(frame.count)
        let framed: [UInt8] =
            [0, UInt8(length & 0xff), UInt8(length >> 8 & 0xff), UInt8(length >> 16), 1, 0x20, 0x4e, 0x00] + frame
        try await MirrorFixture.serving(MirrorFixture.xetMirror(root, acceptsUploads: true), root: root) { mirror in
            let write = try await MirrorXetUploadTests.token(mirror, "write", "acme/up")
            let path = "/xet/v1/xorbs/default/\(hash)"
            let auth = [("Authorization", "Bearer \(write)")]
            async let first = mirror.send(path, headers: auth, bytes: stored)
            async let second = mirror.send(path, headers: auth, bytes: framed)
            let replies = try await [first, second]
            #expect(replies.allSatisfy { $0.status == 200 }, "\(replies.map(\.status))")
            let inserted = replies.compactMap { ($0.json as? [String: Any])?["was_inserted"] as? Bool }
            #expect(inserted.sorted { !$0 && $1 } == [false, true], "one upload kept it: \(inserted)")
        }
        let kept = root.path(".state/xet/uploads/xorbs")
        let onDisk = try [UInt8](Data(contentsOf: kept.appendingPathComponent(hash.description)))
        let layout = try JSONDecoder().decode(
            XorbLayout.self, from: Data(contentsOf: kept.appendingPathComponent("\(hash).json")))
        #expect(try XorbLayout.verifying(onDisk, as: hash) == layout, "the layout describes the bytes kept")
    }
}
