import Foundation
import ModelDepotCore
import ModelDepotTransfer

extension RegistryClient {
    /// How a blob came to be in the registry.
    public enum BlobPush: Sendable, Equatable {
        /// It was there already (a HEAD by digest said so): nothing sent.
        case present
        /// Mounted from another repository of the registry: nothing sent.
        case mounted(from: String)
        /// Uploaded, `bytes` of it sent by this push (less than its size when an upload resumed).
        case uploaded(bytes: Int64)

        public var bytesSent: Int64 {
            if case .uploaded(let bytes) = self { return bytes }
            return 0
        }
    }

    /// The size of each `PATCH` of a chunked upload (and what is re-sent at most after a failure).
    public static let uploadChunkSize: Int64 = 32 << 20

    /// Puts the file at `file` (of `size` bytes, digest `digest`) into `repository` as a blob, unless the registry
    /// holds it: a HEAD by digest first, then a cross-repository mount from each of `mountFrom`, then a chunked
    /// upload (`POST`, `PATCH` per ``uploadChunkSize`` with `Content-Range`, `PUT ?digest=`). A chunk that fails is
    /// resumed from where the registry says the upload stands (`GET` of the upload's location), so a failure
    /// costs at most one chunk. The registry checks the digest when the upload closes.
    ///
    /// - Parameters:
    ///   - repository: the repository of the registry to put it in.
    ///   - file: the file's bytes.
    ///   - digest: its digest, which the registry checks.
    ///   - size: its size in bytes.
    ///   - mountFrom: repositories of the same registry that may hold it already.
    ///   - sent: told the bytes sent so far, after each chunk.
    public func pushBlob(
        _ repository: String, file: URL, digest: OCIDigest, size: Int64, mountFrom: [String] = [],
        sent: @escaping @Sendable (Int64) -> Void = { _ in }
    ) async throws -> BlobPush {
        let scope = Self.pushScope(repository)
        if try await hasBlob(repository, digest, scope: scope) { return .present }
        var location: URL?
        for source in mountFrom where source != repository {
            let mountURL = URL(
                string: url("\(repository)/blobs/uploads/").absoluteString + "?mount=\(digest)&from=\(source)")!
            let response = try await send("POST", mountURL, headers: [("Content-Length", "0")], body: [], scope: scope)
            _ = try? await response.body.collect(limit: 64 << 10, from: mountURL)
            if response.status == 201 { return .mounted(from: source) }
            if response.status == 202 {
                location = try uploadLocation(response, from: mountURL)
                break
            }
        }
        if location == nil { location = try await startUpload(repository, scope: scope) }
        var current = location!
        var offset: Int64 = 0
        var bytesSent: Int64 = 0
        var failures = 0
        // The next chunk is read from disk while this one is sent: the disk and the network work side by side.
        func read(at start: Int64) -> Task<[UInt8], any Error> {
            let count = Int(min(Self.uploadChunkSize, size - start))
            return Task { try await BlockingWork.run { try Self.read(file, offset: start, count: count) } }
        }
        var reading: (offset: Int64, task: Task<[UInt8], any Error>)? = size > 0 ? (0, read(at: 0)) : nil
        defer { reading?.task.cancel() }
        while offset < size {
            if reading?.offset != offset { reading = (offset, read(at: offset)) }
            let chunk = try await reading!.task.value
            let count = chunk.count
            reading = offset + Int64(count) < size ? (offset + Int64(count), read(at: offset + Int64(count))) : nil
            do {
                let response = try await send(
                    "PATCH", current,
                    headers: [
                        ("Content-Type", "application/octet-stream"),
                        ("Content-Range", "\(offset)-\(offset + Int64(count) - 1)"),
                    ], body: chunk, scope: scope, retrying: false)
                guard response.status == 202 else {
                    throw await failure(response, "an upload chunk of \(digest)", url: current)
                }
                _ = try? await response.body.collect(limit: 64 << 10, from: current)
                current = try uploadLocation(response, from: current)
                offset += Int64(count)
                bytesSent += Int64(count)
                sent(bytesSent)
            } catch let error as ModelDepotError where ModelDepotError.Code.transient.contains(error.code) {
                failures += 1
                guard failures < retryPolicy.maxAttempts else { throw error }
                try await retryPolicy.backOff(
                    after: error, attempt: failures, clock: clock, random: Double.random(in: 0..<1))
                // Where the registry has the upload now: it may have taken some or all of the chunk.
                let status = try await send("GET", current, scope: scope)
                _ = try? await status.body.collect(limit: 64 << 10, from: current)
                guard status.status == 204 || status.status == 202 else {
                    throw await failure(status, "the state of an upload of \(digest)", url: current)
                }
                current = try uploadLocation(status, from: current)
                offset = Self.uploadedEnd(status.header("Range")) ?? 0
            }
        }
        var components = URLComponents(url: current, resolvingAgainstBaseURL: true)!
        components.queryItems =
            (components.queryItems ?? []) + [URLQueryItem(name: "digest", value: digest.description)]
        let close = components.url!
        let response = try await send("PUT", close, headers: [("Content-Length", "0")], body: [], scope: scope)
        guard response.status == 201 else { throw await failure(response, "the upload of \(digest)", url: close) }
        _ = try? await response.body.collect(limit: 64 << 10, from: close)
        return .uploaded(bytes: bytesSent)
    }

    /// Puts `bytes` (a config) into `repository` as a blob unless the registry holds it.
    public func pushSmallBlob(_ repository: String, _ bytes: [UInt8]) async throws -> OCIDigest {
        let digest = OCIDigest(of: bytes)
        let scope = Self.pushScope(repository)
        if try await hasBlob(repository, digest, scope: scope) { return digest }
        let start = try await startUpload(repository, scope: scope)
        var components = URLComponents(url: start, resolvingAgainstBaseURL: true)!
        components.queryItems =
            (components.queryItems ?? []) + [URLQueryItem(name: "digest", value: digest.description)]
        let close = components.url!
        let response = try await send(
            "PUT", close, headers: [("Content-Type", "application/octet-stream")], body: bytes, scope: scope)
        guard response.status == 201 else { throw await failure(response, "the upload of \(digest)", url: close) }
        _ = try? await response.body.collect(limit: 64 << 10, from: close)
        return digest
    }

    /// Puts `bytes` as the manifest of `repository` under `reference` (a tag); returns its digest.
    public func pushManifest(_ repository: String, reference: String, _ bytes: [UInt8], mediaType: String) async throws
        -> OCIDigest
    {
        let url = url("\(repository)/manifests/\(reference)")
        let response = try await send(
            "PUT", url, headers: [("Content-Type", mediaType)], body: bytes, scope: Self.pushScope(repository))
        guard response.status == 201 else {
            throw await failure(response, "the manifest \(repository):\(reference)", url: url)
        }
        _ = try? await response.body.collect(limit: 64 << 10, from: url)
        let digest = OCIDigest(of: bytes)
        if let said = response.header("Docker-Content-Digest").flatMap({ OCIDigest($0) }), said != digest {
            throw ModelDepotError(
                .checksumMismatch,
                "\(registry.host ?? "the registry") stored the manifest of \(repository):\(reference) as \(said), not as the \(digest) sent."
            )
        }
        return digest
    }

    private func startUpload(_ repository: String, scope: String) async throws -> URL {
        let url = url("\(repository)/blobs/uploads/")
        let response = try await send("POST", url, headers: [("Content-Length", "0")], body: [], scope: scope)
        guard response.status == 202 else { throw await failure(response, "an upload to \(repository)", url: url) }
        _ = try? await response.body.collect(limit: 64 << 10, from: url)
        return try uploadLocation(response, from: url)
    }

    private func uploadLocation(_ response: TransportResponse, from url: URL) throws -> URL {
        guard let location = response.header("Location"),
            let next = URL(string: location, relativeTo: url)?.absoluteURL,
            ["http", "https"].contains(next.scheme?.lowercased() ?? "")
        else {
            throw ModelDepotError(
                .protocolViolation, "\(registry.host ?? "the registry") answered an upload without a usable Location.")
        }
        return next
    }

    /// The offset after the last byte an upload's `Range: 0-<last>` says the registry holds.
    package static func uploadedEnd(_ range: String?) -> Int64? {
        guard let range, let dash = range.lastIndex(of: "-"), let last = Int64(range[range.index(after: dash)...])
        else {
            return nil
        }
        // Distribution writes `0-0` for an empty upload as well as for one byte: start again from 0 (a registry
        // holding one byte refuses the chunk's range, which fails clearly).
        return last == 0 ? 0 : last + 1
    }

    static func read(_ file: URL, offset: Int64, count: Int) throws -> [UInt8] {
        let handle = try FileHandle(forReadingFrom: file)
        defer { try? handle.close() }
        try handle.seek(toOffset: UInt64(offset))
        let data = try handle.read(upToCount: count) ?? Data()
        guard data.count == count else {
            throw ModelDepotError(
                .invalidArgument, "\(file.path) is shorter than its listed size; it changed while being pushed.")
        }
        return Array(data)
    }
}
