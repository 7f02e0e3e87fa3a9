import Foundation
import ModelDepotCore
import ModelDepotHub
import ModelDepotPlatform
import ModelDepotTransfer
import ModelDepotXet

/// Pulls one file through Xet (Xet documentation, "Download protocol"): the file's reconstruction from the CAS, the
/// xorb byte ranges it names fetched a few at a time, each chunk decompressed (stored, LZ4, byte grouping + LZ4) and
/// written where its term puts it in a partial file; then the file's Xet hash recomputed from every chunk's hash,
/// its SHA-256 checked against the blob's name, and only then the file moved into place. Any lie — a chunk that
/// decompresses to other bytes, a range that holds other chunks, terms that do not add up — fails the pull and
/// leaves nothing where a finished file would be.
package struct XetPull: Sendable {
    let hub: HubClient
    let access: XetAccess
    let fileHash: String
    let size: Int64
    let expectedSHA256: String
    let destination: URL
    let partialPath: String
    /// Xorb ranges fetched at once (each up to 64 MiB held in memory while it is decoded).
    let connections: Int
    /// Told the bytes written so far, and how many of them were copied from files on disk rather than received
    /// (a chart of the network's speed leaves those out).
    let progress: @Sendable (_ written: Int64, _ fromDisk: Int64) -> Void
    /// Chunks already on disk in files pulled before (``XetRecord``), for the xorbs a reconstruction names: terms
    /// made only of these are copied, not fetched. Asked once per pull, off the cooperative pool.
    var local: (@Sendable (Set<String>) -> XetRecord.LocalChunks)?
    /// Flush the file to disk before the rename (`DownloadConfiguration.syncBeforeRename`, `--fsync`).
    var syncBeforeRename = false
    /// The engine's shared cap (`DownloadConfiguration.bandwidthLimit`): each range's bytes are taken from it before
    /// the next range starts, so Xet fetches share the cap with every other download.
    var bandwidth: BandwidthLimit?

    package init(
        hub: HubClient, access: XetAccess, fileHash: String, size: Int64, expectedSHA256: String, destination: URL,
        partialPath: String, connections: Int,
        progress: @escaping @Sendable (_ written: Int64, _ fromDisk: Int64) -> Void = { _, _ in }
    ) {
        self.hub = hub
        self.access = access
        self.fileHash = fileHash
        self.size = size
        self.expectedSHA256 = expectedSHA256
        self.destination = destination
        self.partialPath = partialPath
        self.connections = connections
        self.progress = progress
    }

    /// The record of the terms written into the partial file so far (``XetRecord``), beside it.
    var sidecarPath: String { partialPath + ".json" }

    /// Where a pull of `blob` collects its bytes: beside the HTTP engine's `.incomplete`, never in its place.
    static func partialPath(for blob: URL) -> String { blob.path + ".xet.incomplete" }

    package struct Outcome: Sendable {
        /// Bytes the xorb ranges took on the wire.
        package var bytesFromNetwork: Int64
        /// Bytes copied from files already on disk.
        package var bytesFromDisk: Int64
        /// What to keep beside the file, so a later pull can copy its chunks.
        package var record: XetRecord
    }

    /// Asked for a fresh CAS token when the CAS refuses the one in hand (it expired mid-file, or a signed xorb URL
    /// did): the pull then asks for the reconstruction again and resumes, once.
    package var refreshAccess: (@Sendable () async throws -> XetAccess)?

    package func run() async throws -> Outcome {
        do {
            return try await attempt(with: access)
        } catch let error as ModelDepotError where error.code == .unauthorized {
            guard let refreshAccess else {
                discardPartial()
                throw error
            }
            let fresh: XetAccess
            do {
                fresh = try await refreshAccess()
            } catch {
                // The Hub's own answer (its token refused, the network): said as it is, nothing left behind.
                discardPartial()
                throw error
            }
            do {
                return try await attempt(with: fresh)
            } catch let again as ModelDepotError where again.code == .unauthorized {
                discardPartial()
                throw ModelDepotError(
                    .unauthorized,
                    "The Xet CAS refused the pull of \(fileHash) even with a fresh token: \(again.message)",
                    remedy: .provideToken)
            }
        }
    }

    private func discardPartial() { Self.discardPartial(at: partialPath) }

    /// Removes a Xet pull's partial file at `path`, the record of its terms beside it and that record's temporary
    /// file.
    static func discardPartial(at path: String) {
        for leftover in [path, path + ".json", path + ".json.tmp"] {
            try? FileManager.default.removeItem(atPath: leftover)
        }
    }

    private func attempt(with access: XetAccess) async throws -> Outcome {
        let reconstruction = access.casURL.appendingPathComponent("v1/reconstructions/\(fileHash)")
        let (answer, _) = try await hub.xetGet(
            reconstruction, bearer: access.token, bearerOrigin: access.casURL, limit: 64 << 20)
        let plan: XetDownloadPlan
        do {
            let size = size
            plan = try await BlockingWork.run { try XetDownloadPlan(json: answer, size: size) }
        } catch let refused as XetDownloadPlan.Refused {
            throw ModelDepotError(
                .protocolViolation,
                "The Xet CAS \(access.casURL.host ?? "") sent a reconstruction of \(fileHash) that cannot be this file: \(refused.description)."
            )
        }
        let path = partialPath
        let size = size
        let (sidecar, hash) = (sidecarPath, fileHash)
        let xorbs = Set(plan.terms.map(\.xorb))
        // What a pull of this file that was killed or cancelled left: its partial file and the record of the terms
        // it wrote, resumed term by term (each chunk re-hashed as it is taken); anything else starts afresh.
        let resumed = try await BlockingWork.run { () -> XetRecord? in
            if let data = FileManager.default.contents(atPath: sidecar),
                let record = try? JSONDecoder().decode(XetRecord.self, from: data), record.fileHash == hash,
                record.size == size, FileStatus(path: path)?.size == size
            {
                return record
            }
            try? FileManager.default.removeItem(atPath: sidecar)
            guard FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]),
                let handle = FileHandle(forWritingAtPath: path)
            else { throw ModelDepotError(.fileSystem, "Cannot create \(path) for a Xet pull.") }
            defer { try? handle.close() }
            try Self.writing(path) { try handle.truncate(atOffset: UInt64(size)) }
            return nil
        }
        var local = XetRecord.LocalChunks()
        if let source = self.local { local = try await BlockingWork.run { source(xorbs) } }
        if let resumed { local.add(resumed, blob: path, xorbs: xorbs) }
        do {
            var leaves = [[(hash: XetHash, size: UInt64)]?](repeating: nil, count: plan.terms.count)
            let copied = try await copyLocal(plan, from: local, into: &leaves)
            var written: [Int: [(hash: XetHash, size: UInt64)]] = [:]
            for (index, chunks) in leaves.enumerated() { if let chunks { written[index] = chunks } }
            let received = try await fetchAll(plan, written: written)
            for (term, fetched) in received.leaves { leaves[term] = fetched }
            let complete = leaves.map { $0 ?? [] }
            try await verifyAndPublish(plan, leaves: complete)
            let record = XetRecord(
                fileHash: fileHash, size: size,
                terms: zip(plan.terms, complete).map { term, chunks in
                    XetRecord.Term(
                        xorb: term.xorb, start: term.chunks.lowerBound, offset: term.fileOffset,
                        lengths: chunks.map { Int($0.size) }, hashes: chunks.map(\.hash.description))
                })
            try? FileManager.default.removeItem(atPath: sidecar)
            return Outcome(bytesFromNetwork: received.bytes, bytesFromDisk: copied, record: record)
        } catch let error as ModelDepotError where error.code == .cancelled || error.code == .unauthorized {
            // Kept, with the record of the terms written, for the next attempt or pull to resume.
            throw error
        } catch is CancellationError {
            throw ModelDepotError.cancelled()
        } catch {
            try? FileManager.default.removeItem(atPath: path)
            try? FileManager.default.removeItem(atPath: sidecar)
            throw error
        }
    }

    /// Copies the terms whose every chunk is on disk already, each chunk checked against the hash it was recorded
    /// with (a copy that changed since is not used: its term is fetched); returns the bytes copied.
    private func copyLocal(
        _ plan: XetDownloadPlan, from local: XetRecord.LocalChunks,
        into leaves: inout [[(hash: XetHash, size: UInt64)]?]
    ) async throws -> Int64 {
        let candidates = plan.terms.enumerated().compactMap { index, term -> (Int, [XetRecord.LocalChunk])? in
            let chunks = term.chunks.compactMap { local.chunk(term.xorb, $0) }
            guard chunks.count == term.chunks.count, chunks.reduce(0, { $0 + $1.length }) == term.unpackedLength
            else { return nil }
            return (index, chunks)
        }
        guard !candidates.isEmpty else { return 0 }
        let (path, terms) = (partialPath, plan.terms)
        let copied = try await BlockingWork.run { () -> [(Int, [(hash: XetHash, size: UInt64)])] in
            guard let target = FileHandle(forWritingAtPath: path) else {
                throw ModelDepotError(.fileSystem, "The partial file \(path) of a Xet pull is gone.")
            }
            defer { try? target.close() }
            var sources: [String: FileHandle] = [:]
            defer { for handle in sources.values { try? handle.close() } }
            var copied: [(Int, [(hash: XetHash, size: UInt64)])] = []
            candidates: for (term, chunks) in candidates {
                var bytes: [[UInt8]] = []
                for chunk in chunks {
                    guard let source = sources[chunk.path] ?? FileHandle(forReadingAtPath: chunk.path) else {
                        continue candidates
                    }
                    sources[chunk.path] = source
                    try source.seek(toOffset: UInt64(chunk.offset))
                    let read = [UInt8](try source.read(upToCount: chunk.length) ?? Data())
                    guard read.count == chunk.length, XetHash.chunk(read).description == chunk.hash else {
                        continue candidates
                    }
                    bytes.append(read)
                }
                try Self.writing(path) {
                    try target.seek(toOffset: UInt64(terms[term].fileOffset))
                    for piece in bytes { try target.write(contentsOf: piece) }
                }
                copied.append((term, chunks.map { (XetHash(hex: $0.hash) ?? .zero, UInt64($0.length)) }))
            }
            return copied
        }
        var total: Int64 = 0
        for (term, chunks) in copied {
            leaves[term] = chunks
            total += Int64(plan.terms[term].unpackedLength)
        }
        if total > 0 { progress(total, total) }
        return total
    }

    /// Fetches the ranges the terms not `written` already use, at most `connections` at once, writing those terms'
    /// bytes into place and, after each range, the record of every term in the partial file beside it; returns each
    /// fetched term's chunk hashes and sizes, and the bytes received.
    private func fetchAll(_ plan: XetDownloadPlan, written already: [Int: [(hash: XetHash, size: UInt64)]])
        async throws -> (leaves: [Int: [(hash: XetHash, size: UInt64)]], bytes: Int64)
    {
        let skipping = Set(already.keys)
        var termsOfFetch = [[Int]](repeating: [], count: plan.fetches.count)
        for (index, term) in plan.terms.enumerated() where !skipping.contains(index) {
            termsOfFetch[term.fetch].append(index)
        }
        let needed = termsOfFetch.indices.filter { !termsOfFetch[$0].isEmpty }
        var leaves: [Int: [(hash: XetHash, size: UInt64)]] = [:]
        var received: Int64 = 0
        var written = plan.terms.indices.filter(skipping.contains).reduce(Int64(0)) {
            $0 + Int64(plan.terms[$1].unpackedLength)
        }
        let fromDisk = written
        var recordedBytes: Int64 = 0
        var lastRecord: ContinuousClock.Instant?
        try await withThrowingTaskGroup(of: (fetch: Int, leaves: [[(hash: XetHash, size: UInt64)]], bytes: Int).self) {
            group in
            var next = 0
            func start() {
                guard next < needed.count else { return }
                let index = needed[next]
                next += 1
                let fetch = plan.fetches[index]
                let terms = termsOfFetch[index].map { plan.terms[$0] }
                group.addTask { try await self.fetch(fetch, for: terms, index: index) }
            }
            for _ in 0..<max(1, connections) { start() }
            while let done = try await group.next() {
                for (position, term) in termsOfFetch[done.fetch].enumerated() {
                    leaves[term] = done.leaves[position]
                    written += Int64(plan.terms[term].unpackedLength)
                }
                received += Int64(done.bytes)
                progress(written, fromDisk)
                // The terms written so far, for a pull that resumes after this one is killed.
                // The record is rewritten after the first range, then every 256 MiB or 5 s: its size grows with the
                // file, and writing it after every range of a file of thousands would cost more than the ranges.
                recordedBytes += Int64(done.bytes)
                let now = ContinuousClock.now
                guard lastRecord == nil || recordedBytes >= 256 << 20 || now - lastRecord! >= .seconds(5) else {
                    start()
                    continue
                }
                recordedBytes = 0
                lastRecord = now
                let inFile = leaves.merging(already) { fetched, _ in fetched }
                let record = XetRecord(
                    fileHash: fileHash, size: size,
                    terms: inFile.keys.sorted().map { index in
                        let term = plan.terms[index]
                        let chunks = inFile[index] ?? []
                        return XetRecord.Term(
                            xorb: term.xorb, start: term.chunks.lowerBound, offset: term.fileOffset,
                            lengths: chunks.map { Int($0.size) }, hashes: chunks.map(\.hash.description))
                    })
                let sidecar = sidecarPath
                try await BlockingWork.run {
                    try? AtomicFile.replace(try JSONEncoder().encode(record), atPath: sidecar, mode: 0o600)
                }
                start()
            }
        }
        return (leaves, received)
    }

    /// One xorb range: fetched (no credentials: the URL is the CAS's to sign), decoded, checked against the terms
    /// that use it, and their bytes written into the partial file.
    private func fetch(_ fetch: XetDownloadPlan.Fetch, for terms: [XetDownloadPlan.Term], index: Int) async throws
        -> (fetch: Int, leaves: [[(hash: XetHash, size: UInt64)]], bytes: Int)
    {
        let expected = Int(fetch.bytes.upperBound - fetch.bytes.lowerBound + 1)
        let (body, _) = try await hub.xetGet(fetch.url, range: fetch.bytes, limit: expected + 1)
        try await bandwidth?.take(body.count)
        guard body.count == expected else {
            throw ModelDepotError(
                .sizeMismatch,
                "A xorb range of \(fileHash) came with \(body.count) bytes, not the \(expected) asked for.")
        }
        let path = partialPath
        let hash = fileHash
        let leaves = try await BlockingWork.run { () -> [[(hash: XetHash, size: UInt64)]] in
            let records: [XorbChunks.Record]
            do {
                records = try XorbChunks.records(body, maximumChunks: fetch.chunks.count)
            } catch let malformed as XorbChunks.Malformed {
                throw ModelDepotError(
                    .checksumMismatch, "A xorb range of \(hash) is not chunks: \(malformed.description).")
            }
            guard records.count == fetch.chunks.count else {
                throw ModelDepotError(
                    .checksumMismatch,
                    "A xorb range of \(hash) holds \(records.count) chunks, not \(fetch.chunks.count).")
            }
            guard let handle = FileHandle(forWritingAtPath: path) else {
                throw ModelDepotError(.fileSystem, "The partial file \(path) of a Xet pull is gone.")
            }
            defer { try? handle.close() }
            return try terms.map { term in
                let chunks = records[
                    (term.chunks.lowerBound - fetch.chunks.lowerBound)..<(term.chunks.upperBound
                        - fetch.chunks.lowerBound)]
                guard chunks.reduce(0, { $0 + $1.bytes.count }) == term.unpackedLength else {
                    throw ModelDepotError(
                        .checksumMismatch,
                        "A term of \(hash) decodes to other than the \(term.unpackedLength) bytes it says.")
                }
                try Self.writing(path) {
                    try handle.seek(toOffset: UInt64(term.fileOffset))
                    for chunk in chunks { try handle.write(contentsOf: chunk.bytes) }
                }
                return chunks.map { (XetHash.chunk($0.bytes), UInt64($0.bytes.count)) }
            }
        }
        return (index, leaves, body.count)
    }

    /// The file is what its name says, twice over: the Xet hash its chunks make, and its SHA-256; then it moves into
    /// place.
    private func verifyAndPublish(_ plan: XetDownloadPlan, leaves: [[(hash: XetHash, size: UInt64)]]) async throws {
        let (path, hash, expected, destination) = (partialPath, fileHash, expectedSHA256, destination)
        let sync = syncBeforeRename
        try await BlockingWork.run {
            let computed = XetHash.file(leaves.flatMap { $0 }).description
            guard computed == hash else {
                throw ModelDepotError(
                    .checksumMismatch,
                    "The chunks the Xet CAS sent make the file \(computed), not \(hash); nothing was kept.")
            }
            let sha256 = try FileDigests.sha256(ofFileAt: path)
            guard sha256 == expected else {
                throw ModelDepotError(
                    .checksumMismatch,
                    "The file pulled through Xet has SHA-256 \(sha256), not \(expected); nothing was kept.")
            }
            if sync, let handle = FileHandle(forWritingAtPath: path) {
                defer { try? handle.close() }
                try Self.writing(path) { try handle.synchronize() }
            }
            do {
                try AtomicFile.moveIntoPlace(path, atPath: destination.path)
            } catch {
                throw ModelDepotError(.fileSystem, "\(error)")
            }
        }
    }

    /// Runs file writes, telling a full disk apart (`.insufficientDiskSpace`, which no fallback retries) from other
    /// failures to write (`.fileSystem`).
    static func writing(_ path: String, _ body: () throws -> Void) throws {
        do {
            try body()
        } catch let error as NSError
            where
            (error.domain == NSPOSIXErrorDomain
            && [POSIXError.Code.ENOSPC, .EDQUOT].map { Int($0.rawValue) }.contains(error.code))
            || (error.domain == NSCocoaErrorDomain && error.code == NSFileWriteOutOfSpaceError)
        {
            throw ModelDepotError(
                .insufficientDiskSpace, "The disk filled while \(path) was written by a Xet pull.", remedy: .freeSpace)
        } catch {
            throw ModelDepotError(.fileSystem, "Cannot write \(path) for a Xet pull: \(error).")
        }
    }
}
