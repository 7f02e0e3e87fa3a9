import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import ModelDepotCore
import ModelDepotHub
import ModelDepotTransfer
import NIOCore

/// `HEAD`/`GET …/resolve/…`: the Hub's headers, byte ranges, and a body streamed from disk.
enum FileResponse {
    static func make(
        for file: ServedFile, commit: String, request: Request, context: some RequestContext,
        faults: ServedFaults? = nil, arriving: BlobPull? = nil, metrics: MirrorMetrics? = nil, sendfile: Bool = true,
        smallFiles: SmallFileCache? = nil
    ) async throws -> Response {
        let lastModified = HTTPDate.truncated(file.modified)
        var headers = FileResponseHeads.shared.fields(for: file, commit: commit, lastModified: lastModified)
        let size = Int(file.size)
        var range = 0..<size
        var status = HTTPResponse.Status.ok
        let precondition = ConditionalRequest.evaluate(request.headers, etag: file.etag, lastModified: lastModified)
        if precondition == .notModified {
            headers[.contentType] = nil
            headers[.contentDisposition] = nil
            return Response(status: .notModified, headers: headers)
        }
        if let rangeHeader = request.headers[.range], precondition != .ignoreRange {
            switch ByteRangeRequest.parse(rangeHeader, size: size) {
            case .satisfiable(let requested):
                range = requested
                status = .partialContent
                headers[.contentRange] = "bytes \(requested.lowerBound)-\(requested.upperBound - 1)/\(size)"
            case .unsatisfiable:
                headers[.contentRange] = "bytes */\(size)"
                headers[.contentLength] = "0"
                return Response(status: .rangeNotSatisfiable, headers: headers)
            case .ignored:
                break
            }
        }
        headers.append(HTTPField(name: .contentLength, value: String(range.count)))
        if let arriving {
            // Not yet verified: no HTTP cache may keep it.
            headers[.cacheControl] = "no-store"
            if request.method == .get, !range.isEmpty || arriving.size == 0 {
                let body = ArrivingFileBody.make(
                    arriving, range: Int64(range.lowerBound)..<Int64(range.upperBound),
                    closed: (context as? MirrorRequestContext)?.channel.closeFuture
                ) { metrics?.count(.servedBytes, by: $0) }
                return Response(status: status, headers: headers, body: body)
            }
        }
        if request.method == .head || range.isEmpty {
            return Response(status: status, headers: headers, body: ResponseBody())
        }
        metrics?.count(.servedBytes, by: range.count)
        if let faults, !faults.isEmpty {
            switch faults.draw(startsAtZero: range.lowerBound == 0) {
            case .status503:
                var busy = HTTPFields()
                busy[.retryAfter] = "0"
                busy[.contentLength] = "0"
                return Response(status: .serviceUnavailable, headers: busy, body: ResponseBody())
            case let fault:
                return Response(
                    status: status, headers: headers,
                    body: FaultyFileBody.make(path: file.diskPath, range: range, fault: fault, faults: faults))
            }
        }
        if let smallFiles, let bytes = await smallFiles.bytes(of: file),
            let part = bytes.getSlice(at: range.lowerBound, length: range.count)
        {
            return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: part))
        }
        if sendfile, let channel = (context as? MirrorRequestContext)?.channel,
            let token = await FileRegionStaging.stage(path: file.diskPath, range: range, size: size, on: channel)
        {
            // The connection's FileRegionHandler sends the bytes with sendfile.
            headers[HTTPField.Name(FileRegionHandler.markerField)!] = "\(token)"
            metrics?.count(.sendfileResponses)
            return Response(status: status, headers: headers, body: ResponseBody())
        }
        let body = try await FileIO().loadFile(
            path: file.diskPath, range: range.lowerBound...(range.upperBound - 1), context: context,
            chunkLength: 1 << 20)
        // The file opens when the body is written, with one of the budget's files (HTTP/2 streams are many).
        return Response(
            status: status, headers: headers,
            body: ResponseBody(contentLength: range.count) { writer in
                try await OpenFileBudget.shared.withFile { try await body.write(writer) }
            })
    }

    /// The Hub's answer for content kept elsewhere: a 302 whose headers carry what a client needs to name and
    /// check the blob, since it must not follow the redirect for metadata.
    static func redirect(for file: ServedFile, sha256: String, commit: String, to base: URL) -> Response {
        var headers = HTTPFields()
        headers[FileResponseHeads.repoCommit] = commit
        headers[HTTPField.Name("X-Linked-Etag")!] = "\"\(sha256)\""
        headers[HTTPField.Name("X-Linked-Size")!] = "\(file.size)"
        headers[.location] = base.appendingPathComponent(sha256).absoluteString
        headers[.cacheControl] = "no-store"
        headers[.contentLength] = "0"
        return Response(status: .found, headers: headers, body: ResponseBody())
    }
}
