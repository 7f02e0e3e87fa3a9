import Foundation
import ModelDepotCore

/// The bookkeeping of one file downloaded by the system while the app may be suspended or gone (an iOS background
/// `URLSession`): which ranges are asked for by which task, which are in the partial file, and whether the pieces
/// the system hands back may be spliced in. Portable and persisted, so a relaunched app picks up exactly where the
/// last one stopped; the URLSession glue only forwards the delegate's calls here.
///
/// Each completed piece is checked before a byte of it is written: a `206` whose `Content-Range` is the range asked
/// for, of the file's total size, with the validator (`ETag`) the transfer started with, and exactly as many bytes
/// as the range. A piece that fails goes back to be asked for again (a `200` where a range was asked, a wrong length
/// or range); a different `ETag` means the file changed upstream, and the transfer restarts from nothing. The
/// finished file is hashed against the expected SHA-256 before it is moved into place; if that fails, nothing is
/// placed and every piece is asked for again.
public struct BackgroundTransfer: Codable, Sendable, Equatable {
    /// One range of the file and the task that fetches it.
    public struct Piece: Codable, Sendable, Equatable {
        public var start: Int64
        public var end: Int64
        /// The system's task for it (`URLSessionTask.taskIdentifier`), while one is out.
        public var task: Int?
        public var done: Bool

        public var range: Range<Int64> { start..<end }
    }

    /// What became of a piece the system handed back.
    public enum Outcome: Sendable, Equatable {
        /// Written into the partial file.
        case spliced(Range<Int64>)
        /// A task this transfer does not know, or a piece already written: ignored.
        case duplicate
        /// Not written; the piece will be asked for again. The reason says why.
        case refused(String)
        /// The file changed upstream: every piece will be asked for again.
        case restarted(String)
    }

    /// A request to hand to the system for one piece.
    public struct PieceRequest: Sendable, Equatable {
        public var piece: Int
        public var url: URL
        public var headers: [String: String]
        /// What the task will receive (`countOfBytesClientExpectsToReceive`).
        public var expectedBytes: Int64
    }

    public let url: URL
    public let destination: URL
    public let size: Int64
    public let sha256: String
    /// The validator of the file being fetched (its `ETag`); a piece with another is a different file.
    public private(set) var etag: String
    public private(set) var pieces: [Piece]

    /// A transfer of `size` bytes from `url` in pieces of `pieceSize`, for the file the validator `etag` names.
    public init(url: URL, destination: URL, size: Int64, sha256: String, etag: String, pieceSize: Int64 = 64 << 20) {
        self.url = url
        self.destination = destination
        self.size = size
        self.sha256 = sha256.lowercased()
        self.etag = etag
        let step = max(pieceSize, 1)
        pieces = stride(from: Int64(0), to: size, by: Int(step)).map {
            Piece(start: $0, end: min($0 + step, size), task: nil, done: false)
        }
    }

    /// Where the bytes gather until the file is complete and verified.
    public var partialFile: URL { destination.appendingPathExtension("background") }
    /// Where this record is kept, beside the partial file.
    public var recordFile: URL { destination.appendingPathExtension("background.json") }

    /// Whether every piece is in the partial file.
    public var isComplete: Bool { pieces.allSatisfy(\.done) }

    /// Bytes in the partial file.
    public var bytesDone: Int64 { pieces.filter(\.done).reduce(0) { $0 + $1.end - $1.start } }

    /// Requests for the pieces no task is fetching; record each task's identifier with ``assign(task:to:)``.
    public func requestsToStart() -> [PieceRequest] {
        pieces.indices.filter { !pieces[$0].done && pieces[$0].task == nil }.map { index in
            let piece = pieces[index]
            return PieceRequest(
                piece: index, url: url,
                headers: [
                    "Range": "bytes=\(piece.start)-\(piece.end - 1)", "If-Range": etag, "Accept-Encoding": "identity",
                ],
                expectedBytes: piece.end - piece.start)
        }
    }

    /// Records that the system's task `task` fetches piece `piece` (persist the record afterwards).
    public mutating func assign(task: Int, to piece: Int) {
        pieces[piece].task = task
    }

    /// The tasks out, for a relaunched app to match against the session's `getAllTasks`.
    public var tasksOut: [Int] { pieces.compactMap(\.task) }

    /// The system finished task `task` with this response and the body in the file at `location` (the delegate's
    /// `didFinishDownloadingTo`): checks the piece and splices it into the partial file, or says why not.
    ///
    /// - Throws: file system errors writing the partial file.
    public mutating func finished(
        task: Int, status: Int, headers: [String: String], location: URL
    ) throws -> Outcome {
        guard let index = pieces.firstIndex(where: { $0.task == task }) else { return .duplicate }
        pieces[index].task = nil
        if pieces[index].done { return .duplicate }
        let piece = pieces[index]
        func header(_ name: String) -> String? {
            headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
        }
        if let served = header("ETag"), served != etag {
            let old = etag
            try restart()
            // The new file is fetched from now on; whether it is the expected one, the final hash decides.
            etag = served
            return .restarted("the file changed upstream (ETag \(served), the transfer started with \(old))")
        }
        guard status == 206 else {
            return .refused("the server answered \(status) where bytes \(piece.start)-\(piece.end - 1) were asked for")
        }
        let expected = "bytes \(piece.start)-\(piece.end - 1)/\(size)"
        guard header("Content-Range") == expected else {
            return .refused("the server sent \(header("Content-Range") ?? "no Content-Range"), not \(expected)")
        }
        let received = (try? FileManager.default.attributesOfItem(atPath: location.path)[.size] as? NSNumber)?
            .int64Value
        guard received == piece.end - piece.start else {
            return .refused("the piece holds \(received ?? 0) bytes, not the \(piece.end - piece.start) asked for")
        }
        try splice(location, at: piece.start)
        pieces[index].done = true
        return .spliced(piece.range)
    }

    /// The system gave up on task `task` (the delegate's `didCompleteWithError`): its piece will be asked for again.
    public mutating func failed(task: Int) {
        guard let index = pieces.firstIndex(where: { $0.task == task }) else { return }
        pieces[index].task = nil
    }

    /// Once every piece is in: hashes the partial file and moves it to the destination.
    ///
    /// - Throws: `checksumMismatch` when the bytes are not the expected file (the partial file is deleted and every
    ///   piece will be asked for again: nothing unverified is ever placed); file system errors.
    public mutating func finish() throws -> URL {
        guard isComplete else {
            throw ModelDepotError(
                .incompleteSnapshot, "\(destination.lastPathComponent) is missing \(size - bytesDone) bytes.")
        }
        let digest = try FileDigests.sha256(ofFileAt: partialFile.path)
        guard digest == sha256 else {
            try restart()
            throw ModelDepotError(
                .checksumMismatch,
                "\(destination.lastPathComponent) downloaded in the background has SHA-256 \(digest), not \(sha256); nothing was placed and it will be downloaded again."
            )
        }
        if FileManager.default.fileExists(atPath: destination.path) {
            try FileManager.default.removeItem(at: destination)
        }
        try FileManager.default.moveItem(at: partialFile, to: destination)
        try? FileManager.default.removeItem(at: recordFile)
        return destination
    }

    /// Writes the record next to the partial file, atomically.
    public func save() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try encoder.encode(self).write(to: recordFile, options: .atomic)
    }

    /// The record a previous launch saved for `destination`, if any.
    public static func load(for destination: URL) throws -> BackgroundTransfer? {
        let file = destination.appendingPathExtension("background.json")
        guard let data = FileManager.default.contents(atPath: file.path) else { return nil }
        do {
            return try JSONDecoder().decode(BackgroundTransfer.self, from: data)
        } catch {
            throw ModelDepotError(.fileSystem, "The background download record \(file.path) is damaged: \(error).")
        }
    }

    /// Forgets every piece and every task out (their answers are then ignored as unknown: cancel them).
    private mutating func restart() throws {
        for index in pieces.indices {
            pieces[index].done = false
            pieces[index].task = nil
        }
        try? FileManager.default.removeItem(at: partialFile)
    }

    /// Copies the piece's bytes into the partial file at `offset`.
    private func splice(_ location: URL, at offset: Int64) throws {
        if !FileManager.default.fileExists(atPath: partialFile.path) {
            guard FileManager.default.createFile(atPath: partialFile.path, contents: nil) else {
                throw ModelDepotError(.fileSystem, "Cannot create \(partialFile.path).")
            }
        }
        let output = try FileHandle(forWritingTo: partialFile)
        defer { try? output.close() }
        let input = try FileHandle(forReadingFrom: location)
        defer { try? input.close() }
        try output.seek(toOffset: UInt64(offset))
        while let chunk = try input.read(upToCount: 4 << 20), !chunk.isEmpty {
            try output.write(contentsOf: chunk)
        }
    }
}
