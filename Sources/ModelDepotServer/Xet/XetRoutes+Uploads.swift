import Foundation
import HTTPTypes
import Hummingbird
import ModelDepotCore
import ModelDepotXet
import NIOCore

/// The CAS's upload side (Xet documentation, "Upload protocol", "CAS API"), in the order hf_xet 1.8 asks: the
/// global deduplication query (`GET /v1/chunks/default/{hash}`, always 404: this CAS offers none), the xorb grant
/// (404: xorbs come straight to `POST /v1/xorbs/default/{hash}`), the xorbs, the shard (`/v2/shards` is 404, so
/// clients send it to `POST /v1/shards`), and telemetry (taken and dropped, at `/v1/telemetry` on the host's root). Uploads need the write token the
/// `xet-write-token` route issues, and a mirror started with `--xet-uploads`.
extension XetRoutes {
    func addUploads(to group: RouterGroup<MirrorRequestContext>) {
        group.endpoint("/v1/chunks/:prefix/:hash", [.get]) { request, _ in
            guard let token = Self.bearer(request), await store.repository(of: token) != nil else {
                return Self.error(401, "A Xet token is required.")
            }
            return Self.error(404, "This CAS offers no global deduplication.")
        }
        group.endpoint("/v1/xorb-grants/**", [.post]) { _, _ in
            Self.error(404, "This CAS takes xorbs at /v1/xorbs/default/{hash}, without a grant.")
        }
        group.endpoint("/v2/shards", [.post]) { _, _ in
            Self.error(404, "This CAS takes shards at /v1/shards.")
        }
        group.endpoint("/v1/xorbs/:prefix/:hash", [.post]) { request, context in
            try await uploadXorb(
                request, prefix: context.parameters.get("prefix") ?? "", hash: context.parameters.get("hash") ?? "")
        }
        group.endpoint("/v1/shards", [.post]) { request, _ in
            try await uploadShard(request)
        }
    }

    /// `POST /v1/telemetry`, taken and dropped: hf_xet sends its transfer statistics there, at the root of the CAS
    /// URL's host rather than under the CAS's path.
    func addTelemetry(to group: RouterGroup<MirrorRequestContext>) {
        group.endpoint("/telemetry", [.post]) { request, _ in
            guard let token = Self.bearer(request), await store.repository(of: token) != nil else {
                return Self.error(401, "A Xet token is required.")
            }
            _ = try? await request.body.collect(upTo: 1 << 20)
            return HubEndpoints.json([String: Any]())
        }
    }

    /// The uploads store and the repository a write token in `request` may write to; else the answer refusing it.
    private func writer(_ request: Request) async -> Result<(XetUploads, String), XetUploads.Refusal> {
        guard let uploads = store.uploads else {
            return .failure(.init(status: 403, message: "This mirror takes no uploads (serve --xet-uploads)."))
        }
        guard let token = Self.bearer(request), await store.repository(of: token) != nil else {
            return .failure(.init(status: 401, message: "A Xet write token is required (xet-write-token route)."))
        }
        guard let repository = await store.repository(writingWith: token) else {
            return .failure(.init(status: 403, message: "This token reads; uploads need a write token."))
        }
        return .success((uploads, repository))
    }

    private func uploadXorb(_ request: Request, prefix: String, hash: String) async throws -> Response {
        let (uploads, _): (XetUploads, String)
        switch await writer(request) {
        case .success(let granted): (uploads, _) = granted
        case .failure(let refusal): return Self.error(refusal.status, refusal.message)
        }
        guard prefix == "default", let expected = XetHash(hex: hash), hash == expected.description else {
            return Self.error(400, "A xorb is sent to /v1/xorbs/default/{64 lowercase hex digits}.")
        }
        let body: ByteBuffer
        do {
            body = try await request.body.collect(upTo: XetUploads.maximumXorbBody)
        } catch is NIOTooManyBytesError {
            return Self.error(413, "A xorb is at most 64 MiB of chunks.")
        }
        do {
            let inserted = try await uploads.storeXorb(Array(body.readableBytesView), as: expected)
            return HubEndpoints.json(["was_inserted": inserted])
        } catch let refusal as XetUploads.Refusal {
            return Self.error(refusal.status, refusal.message)
        }
    }

    private func uploadShard(_ request: Request) async throws -> Response {
        let (uploads, repository): (XetUploads, String)
        switch await writer(request) {
        case .success(let granted): (uploads, repository) = granted
        case .failure(let refusal): return Self.error(refusal.status, refusal.message)
        }
        let body: ByteBuffer
        do {
            body = try await request.body.collect(upTo: XetUploads.maximumShardBody)
        } catch is NIOTooManyBytesError {
            return Self.error(413, "A shard is at most 16 MiB.")
        }
        let shard: XetShard
        do {
            let bytes = Array(body.readableBytesView)
            shard = try await BlockingWork.run { try XetShard(parsing: bytes) }
        } catch let error as XorbChunks.Malformed {
            return Self.error(400, "Shard refused: \(error.description).")
        }
        do {
            // The protocol's UploadShardResponseType: 1 recorded ("sync performed"), 0 already there ("exists").
            return HubEndpoints.json(["result": try await uploads.record(shard, for: repository) ? 1 : 0])
        } catch let refusal as XetUploads.Refusal {
            return Self.error(refusal.status, refusal.message)
        }
    }

    /// Bytes of an uploaded xorb as it was sent (its chunks as the client compressed them), all or one range,
    /// streamed from disk a MiB at a time off the cooperative pool — only bytes within one of the `readable` spans
    /// (the chunks the reader's repository cites), as the Hub signs a xorb URL for a range.
    static func uploadedXorb(_ request: Request, path: String, length: Int, readable: [Range<Int>]) throws -> Response {
        var wanted: Range<Int64> = 0..<Int64(length)
        let partial = request.headers[.range] != nil
        if let header = request.headers[.range] {
            guard let parsed = byteRange(header, size: Int64(length)) else {
                return error(416, "The range \(header.prefix(100)) is not one this xorb has.")
            }
            wanted = parsed
        }
        // The spans merged where they overlap or touch: a reconstruction merges the ranges of a xorb it names.
        let spans = ByteRangeSet(readable.map { Int64($0.lowerBound)..<Int64($0.upperBound) })
        guard spans.contains(wanted) else {
            return error(403, "Those bytes of the xorb hold no chunk a file of this repository cites.")
        }
        var headers = HTTPFields()
        headers[.contentType] = "application/octet-stream"
        headers[.contentLength] = "\(wanted.count)"
        if partial { headers[.contentRange] = "bytes \(wanted.lowerBound)-\(wanted.upperBound - 1)/\(length)" }
        let range = wanted
        let body = ResponseBody(contentLength: Int(range.count)) { writer in
            var at = range.lowerBound
            while at < range.upperBound {
                let count = Int(min(1 << 20, range.upperBound - at))
                let from = at
                let piece = try await BlockingWork.run { () -> Data in
                    guard let handle = FileHandle(forReadingAtPath: path) else {
                        throw ModelDepotError(.fileSystem, "An uploaded xorb is gone.")
                    }
                    defer { try? handle.close() }
                    try handle.seek(toOffset: UInt64(from))
                    let piece = try handle.read(upToCount: count) ?? Data()
                    guard piece.count == count else {
                        throw ModelDepotError(.sourceChanged, "An uploaded xorb is shorter than it was.")
                    }
                    return piece
                }
                try await writer.write(ByteBuffer(bytes: piece))
                at += Int64(count)
            }
            try await writer.finish(nil)
        }
        return Response(status: partial ? .partialContent : .ok, headers: headers, body: body)
    }
}
