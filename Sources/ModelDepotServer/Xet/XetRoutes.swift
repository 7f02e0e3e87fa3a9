import Foundation
import HTTPTypes
import Hummingbird
import ModelDepotCore
import ModelDepotXet
import NIOCore

/// The mirror's CAS (Xet documentation, "CAS API" and "Download protocol"), mounted at `/xet`: reconstructions of
/// the files it indexed (API v1; v2 answers 404 so clients fall back, as hf_xet does), and the stored chunks of
/// their xorbs by byte range. Reconstructions need the read token the `xet-read-token` route issued, as
/// `Authorization: Bearer`; xorb URLs carry it in their query, since clients fetch them as they fetch a signed
/// URL, without credentials. A token reads only files of the repository it was issued for.
struct XetRoutes: Sendable {
    let store: XetStore
    /// `http` or `https`: how clients reach the mirror, for the xorb URLs.
    let scheme: String

    func add(to group: RouterGroup<MirrorRequestContext>) {
        group.endpoint("/v1/reconstructions/:hash", [.get]) { request, context in
            try await reconstruction(request, hash: context.parameters.get("hash") ?? "")
        }
        group.endpoint("/v2/reconstructions/:hash", [.get]) { _, _ in
            Self.error(404, "This CAS answers reconstructions through /v1.")
        }
        group.endpoint("/xorbs/:hash", [.get]) { request, context in
            try await xorb(request, hash: context.parameters.get("hash") ?? "")
        }
        addUploads(to: group)
    }

    private func reconstruction(_ request: Request, hash: String) async throws -> Response {
        guard let token = Self.bearer(request), let repository = await store.repository(of: token) else {
            return Self.error(401, "A Xet read token is required (from the repository's xet-read-token route).")
        }
        // A file the mirror indexed, or one a client uploaded (made of pieces of its xorbs).
        let size: Int64
        var index: XetFileIndex?
        var pieces: [XetReconstruction.Piece] = []
        if let entry = await store.file(hash, readableBy: repository) {
            size = entry.index.size
            index = entry.index
        } else if let uploaded = await store.uploads?.file(hash, readableBy: repository) {
            size = uploaded.file.size
            pieces = uploaded.pieces
        } else {
            return Self.error(404, "No file with Xet hash \(hash.prefix(64)) in \(repository).")
        }
        var range: Range<Int64>?
        if let header = request.headers[.range] {
            guard let parsed = Self.byteRange(header, size: size) else {
                return Self.error(416, "The range \(header.prefix(100)) is not one this file has.")
            }
            range = parsed
        }
        let planned =
            index.map { $0.reconstruction(of: range) } ?? XetReconstruction.plan(pieces, size: size, range: range)
        guard let plan = planned else { return Self.error(416, "The range starts past the end of the file.") }
        let host = request.head.authority ?? "127.0.0.1"
        var fetchInfo: [String: [[String: Any]]] = [:]
        for fetch in plan.fetches {
            fetchInfo[fetch.xorb, default: []].append([
                "range": ["start": fetch.chunks.lowerBound, "end": fetch.chunks.upperBound],
                "url": "\(scheme)://\(host)/xet/xorbs/\(fetch.xorb)?token=\(token)",
                "url_range": ["start": fetch.bytes.lowerBound, "end": fetch.bytes.upperBound],
            ])
        }
        let body: [String: Any] = [
            "offset_into_first_range": plan.offsetIntoFirstRange,
            "terms": plan.terms.map { term in
                [
                    "hash": term.xorb, "unpacked_length": term.unpackedLength,
                    "range": ["start": term.chunks.lowerBound, "end": term.chunks.upperBound],
                ] as [String: Any]
            },
            "fetch_info": fetchInfo,
        ]
        return HubEndpoints.json(body)
    }

    private func xorb(_ request: Request, hash: String) async throws -> Response {
        guard let token = request.uri.queryParameters["token"].map(String.init),
            let repository = await store.repository(of: token)
        else {
            return Self.error(403, "This xorb URL's token is missing or expired: ask for the reconstruction again.")
        }
        guard let (entry, position) = await store.xorb(hash, readableBy: repository) else {
            if let uploaded = await store.uploads?.xorb(hash, readableBy: repository) {
                return try Self.uploadedXorb(
                    request, path: uploaded.path, length: uploaded.length, readable: uploaded.spans)
            }
            return Self.error(404, "No xorb \(hash.prefix(64)) in \(repository).")
        }
        let index = entry.index
        let xorb = index.xorbs[position]
        // Where each of the xorb's chunks is stored in it, and where it is in the file: one pass.
        var storedStarts: [Int64] = []
        var fileStarts: [Int64] = []
        var stored: Int64 = 0
        var inFile = entry.xorbOffsets[position]
        for chunk in index.chunks[xorb.firstChunk..<xorb.endChunk] {
            storedStarts.append(stored)
            fileStarts.append(inFile)
            stored += Int64(chunk.length + XorbChunks.headerLength)
            inFile += Int64(chunk.length)
        }
        let total = stored
        var wanted: Range<Int64> = 0..<total
        if let header = request.headers[.range] {
            guard let parsed = Self.byteRange(header, size: total) else {
                return Self.error(416, "The range \(header.prefix(100)) is not one this xorb has.")
            }
            wanted = parsed
        }
        // The file must still be what was indexed: its bytes are served under the index's hashes.
        guard XetStore.stamp(of: entry.diskPath) == entry.stamp else {
            await store.forget(entry.etag)
            return Self.error(409, "The file behind xorb \(hash.prefix(64)) changed; ask for the file again.")
        }
        let path = entry.diskPath
        let chunkLengths = index.chunks[xorb.firstChunk..<xorb.endChunk].map(\.length)
        let (storedAt, fileAt, range) = (storedStarts, fileStarts, wanted)
        var headers = HTTPFields()
        headers[.contentType] = "application/octet-stream"
        headers[.contentLength] = "\(wanted.count)"
        let partial = request.headers[.range] != nil
        if partial { headers[.contentRange] = "bytes \(wanted.lowerBound)-\(wanted.upperBound - 1)/\(total)" }
        // Streamed a few chunks at a time, read off the cooperative pool: a 64 MiB xorb never sits in memory.
        let body = ResponseBody(contentLength: Int(range.count)) { writer in
            // The first chunk that ends after the range's start.
            var next = 0
            while next < chunkLengths.count,
                storedAt[next] + Int64(chunkLengths[next] + XorbChunks.headerLength) <= range.lowerBound
            {
                next += 1
            }
            while next < chunkLengths.count, storedAt[next] < range.upperBound {
                let batch = next..<min(chunkLengths.count, next + 16)
                let (starts, lengths) = (fileAt, chunkLengths)
                let run = try await BlockingWork.run { () -> [UInt8] in
                    guard let handle = FileHandle(forReadingAtPath: path) else {
                        throw ModelDepotError(.fileSystem, "The file behind a xorb is gone.")
                    }
                    defer { try? handle.close() }
                    var run: [UInt8] = []
                    for chunk in batch {
                        try handle.seek(toOffset: UInt64(starts[chunk]))
                        let bytes = try handle.read(upToCount: lengths[chunk]) ?? Data()
                        guard bytes.count == lengths[chunk] else {
                            throw ModelDepotError(.sourceChanged, "The file behind a xorb changed.")
                        }
                        run += XorbChunks.stored(bytes)
                    }
                    return run
                }
                // Only the part of the batch inside the range asked for.
                let runStart = storedAt[batch.lowerBound]
                let from = Int(max(0, range.lowerBound - runStart))
                let to = Int(min(Int64(run.count), range.upperBound - runStart))
                if from < to { try await writer.write(ByteBuffer(bytes: run[from..<to])) }
                next = batch.upperBound
            }
            try await writer.finish(nil)
        }
        return Response(status: partial ? .partialContent : .ok, headers: headers, body: body)
    }

    /// `bytes=S-E` or `bytes=S-` (one range) within `size`, as a half-open range; nil otherwise.
    static func byteRange(_ header: String, size: Int64) -> Range<Int64>? {
        guard header.hasPrefix("bytes="), !header.contains(",") else { return nil }
        let parts = header.dropFirst(6).split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, let start = Int64(parts[0]), start >= 0, start < size else { return nil }
        let end = parts[1].isEmpty ? size - 1 : Int64(parts[1]).map { min($0, size - 1) }
        guard let end, end >= start else { return nil }
        return start..<(end + 1)
    }

    static func bearer(_ request: Request) -> String? {
        guard let value = request.headers[.authorization], value.lowercased().hasPrefix("bearer ") else { return nil }
        return String(value.dropFirst(7)).trimmingCharacters(in: .whitespaces)
    }

    static func error(_ status: Int, _ message: String) -> Response {
        var response = HubEndpoints.json(["error": message])
        response.status = HTTPResponse.Status(code: status)
        return response
    }
}
