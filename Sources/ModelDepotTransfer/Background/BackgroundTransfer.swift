import Foundation
import ModelDepotCore

/// The bookkeeping of one file downloaded by the system while the app may be suspended or gone (an iOS background
/// `URLSession`): which ranges are asked for by which task, which are in the partial file, how often each failed,
/// and whether the pieces the system hands back may be spliced in. Portable and persisted, so a relaunched app picks
/// up exactly where the last one stopped; ``BackgroundSessionState`` drives it and the URLSession glue only forwards
/// the delegate's calls.
///
/// Background sessions follow redirects themselves (NSURLSession.h: "For tasks in background sessions,
/// redirections will always be followed"), so a piece's answer comes from wherever the Hub sent it — a CDN with
/// validators of its own. The validator is therefore taken from the first `206` (a strong `ETag`, else
/// `Last-Modified`, as the foreground engine does), not from the Hub's metadata; later pieces send it in `If-Range`,
/// and a piece whose validator contradicts it means the file changed: every piece is asked for again and every task
/// out is cancelled.
///
/// Each completed piece is checked before a byte of it is written: a `206` whose `Content-Range` is the range asked
/// for, of the file's total size, and exactly as many bytes as the range. A piece that fails is asked for again
/// after a backoff (`earliestBeginDate`), up to ``RetryRule/maxAttempts`` times (fewer for answers that will not
/// change: 401, 403, 404, 410); then the transfer fails with the reason, keeping the pieces it has. The finished file
/// is hashed against the expected SHA-256 before it is moved into place; a mismatch fetches it once more, a second
/// one fails the transfer.
package struct BackgroundTransfer: Codable, Sendable, Equatable {
    /// Where the pieces come from; a fresh URL (a new signed link) may replace it (``retry(from:)``).
    package private(set) var url: URL
    package let destination: URL
    package let size: Int64
    package let sha256: String
    package let retryRule: RetryRule
    /// The validators of the file being fetched, from the first `206`; nil until one arrives.
    private(set) var validators: ResourceValidators?
    package private(set) var pieces: [Piece]
    /// Why the transfer stopped (refused too often, or the bytes twice not the expected file); nil while it goes on.
    package private(set) var failure: String?
    /// Finished files whose hash was not the expected one.
    private(set) var verificationFailures = 0
    /// Restarts because a piece's validator contradicted the transfer's (the file changed, or CDN edges disagree).
    private(set) var restarts = 0
    /// Restarts before the transfer fails: a source that keeps changing is not a file to fetch in pieces.
    static let maxRestarts = 3

    /// A transfer of `size` bytes from `url` in pieces of `pieceSize`. `url` must be one the system may fetch
    /// without credentials: background tasks follow redirects on their own, and a token sent to the Hub would follow
    /// them to wherever the Hub points; for a gated file, resolve the Hub's redirect in the foreground (with the
    /// token) and hand over the signed link.
    package init(
        url: URL, destination: URL, size: Int64, sha256: String, pieceSize: Int64 = 64 << 20,
        retryRule: RetryRule = RetryRule()
    ) {
        self.url = url
        self.destination = destination
        self.size = size
        self.sha256 = sha256.lowercased()
        self.retryRule = retryRule
        let step = max(pieceSize, 1)
        pieces = stride(from: Int64(0), to: size, by: Int(step)).map {
            Piece(start: $0, end: min($0 + step, size))
        }
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        url = try container.decode(URL.self, forKey: .url)
        destination = try container.decode(URL.self, forKey: .destination)
        size = try container.decode(Int64.self, forKey: .size)
        sha256 = try container.decode(String.self, forKey: .sha256)
        retryRule = try container.decodeIfPresent(RetryRule.self, forKey: .retryRule) ?? RetryRule()
        // Records of earlier versions hold the Hub's ETag, which is not the CDN's validator: the next 206 sets it.
        validators = try container.decodeIfPresent(ResourceValidators.self, forKey: .validators)
        pieces = try container.decode([Piece].self, forKey: .pieces)
        failure = try container.decodeIfPresent(String.self, forKey: .failure)
        verificationFailures = try container.decodeIfPresent(Int.self, forKey: .verificationFailures) ?? 0
        restarts = try container.decodeIfPresent(Int.self, forKey: .restarts) ?? 0
    }

    /// Whether every piece is in the partial file (at once for an empty file).
    package var isComplete: Bool { pieces.allSatisfy(\.done) }

    /// Bytes in the partial file.
    package var bytesDone: Int64 { pieces.filter(\.done).reduce(0) { $0 + $1.end - $1.start } }

    /// Requests for the pieces no task is fetching (none once the transfer failed); record each task's identifier
    /// with ``assign(task:to:)``.
    package func requestsToStart() -> [PieceRequest] {
        guard failure == nil else { return [] }
        return pieces.indices.filter { !pieces[$0].done && pieces[$0].task == nil }.map { index in
            let piece = pieces[index]
            var headers = ["Range": "bytes=\(piece.start)-\(piece.end - 1)", "Accept-Encoding": "identity"]
            if let ifRange = validators?.ifRangeValue { headers["If-Range"] = ifRange }
            return PieceRequest(
                piece: index, url: url, headers: headers, expectedBytes: piece.end - piece.start,
                notBefore: piece.notBefore, resumeData: piece.resumeData)
        }
    }

    /// Takes over what another download wrote to `partial`: it becomes this transfer's partial file, and the pieces
    /// lying wholly inside `completed` count as done (a piece the other download left half-written is fetched).
    ///
    /// - Throws: when `partial` cannot be moved.
    package mutating func adopt(_ partial: URL, completed: [Range<Int64>]) throws {
        try? FileManager.default.removeItem(at: partialFile)
        try FileManager.default.moveItem(at: partial, to: partialFile)
        for index in pieces.indices
        where completed.contains(where: { $0.lowerBound <= pieces[index].start && pieces[index].end <= $0.upperBound })
        {
            pieces[index].done = true
        }
    }

    /// Records that the system's task `task` fetches piece `piece` (persist the record afterwards).
    package mutating func assign(task: Int, to piece: Int) {
        pieces[piece].task = task
        pieces[piece].resumeData = nil
    }

    /// The tasks out, for a relaunched app to match against the session's `getAllTasks`.
    package var tasksOut: [Int] { pieces.compactMap(\.task) }

    /// Forgets the tasks the system no longer has (a relaunch after the person force-quit the app, which cancels
    /// them): their pieces are asked for again.
    package mutating func forget(tasksNotIn running: Set<Int>) {
        for index in pieces.indices where pieces[index].task.map({ !running.contains($0) }) ?? false {
            pieces[index].task = nil
        }
    }

    /// The system finished task `task` with this response and the body in the file at `location` (the delegate's
    /// `didFinishDownloadingTo`, which is also called for an error status: a background session reports only
    /// client-side failures as errors): checks the piece and splices it into the partial file, or says why not.
    ///
    /// - Throws: file system errors writing the partial file.
    package mutating func finished(
        task: Int, status: Int, headers: [String: String], location: URL, now: Date = Date()
    ) throws -> Outcome {
        guard let index = pieces.firstIndex(where: { $0.task == task }) else { return .duplicate }
        pieces[index].task = nil
        if pieces[index].done { return .duplicate }
        let piece = pieces[index]
        func header(_ name: String) -> String? {
            headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
        }
        let served = ResourceValidators(etag: header("ETag"), lastModified: header("Last-Modified"))
        if status == 200 || status == 206, let validators, validators.conflicts(with: served) {
            let cancel = tasksOut
            let reason =
                "the file changed upstream (\(served.ifRangeValue ?? "new validators"), the transfer had \(validators.ifRangeValue ?? "others"))"
            try restart()
            restarts += 1
            guard restarts <= Self.maxRestarts else {
                failure = "\(reason), \(restarts) times: the source keeps changing"
                return .failed(failure!)
            }
            return .restarted(reason, cancel: cancel)
        }
        guard status == 206 else {
            let reason = "the server answered \(status) where bytes \(piece.start)-\(piece.end - 1) were asked for"
            return refuse(
                index, reason, lasting: [401, 403, 404, 410].contains(status),
                retryAfter: header("Retry-After").flatMap { RetryAfter.parse($0, now: now) }, now: now)
        }
        // A task continued from resume data ends with the 206 of the remainder (its start past the piece's), while
        // the file the system hands over holds the whole piece: the end and the total must match.
        let contentRange = header("Content-Range").flatMap(ContentRange.init(header:))
        guard let sent = contentRange?.range, contentRange?.total == size, sent.upperBound == piece.end,
            sent.lowerBound >= piece.start
        else {
            let expected = "bytes \(piece.start)-\(piece.end - 1)/\(size)"
            return refuse(
                index, "the server sent \(header("Content-Range") ?? "no Content-Range"), not \(expected)", now: now)
        }
        let received = (try? FileManager.default.attributesOfItem(atPath: location.path)[.size] as? NSNumber)?
            .int64Value
        guard received == piece.end - piece.start else {
            return refuse(
                index, "the piece holds \(received ?? 0) bytes, not the \(piece.end - piece.start) asked for", now: now)
        }
        do {
            try splice(location, at: piece.start)
        } catch {
            // A full disk, say: counted and waited on like any refusal, not fetched again at once for ever.
            return refuse(index, "the piece could not be written (\(error.localizedDescription))", now: now)
        }
        if validators == nil { validators = served }
        pieces[index].done = true
        pieces[index].attempts = 0
        pieces[index].notBefore = nil
        return .spliced(piece.range)
    }

    /// The system gave up on task `task` (the delegate's `didCompleteWithError` with an error): its piece will be
    /// asked for again after a wait, continuing from `resumeData` when the system gave some.
    package mutating func failed(task: Int, reason: String, resumeData: Data? = nil, now: Date = Date()) -> Outcome {
        guard let index = pieces.firstIndex(where: { $0.task == task }) else { return .duplicate }
        pieces[index].task = nil
        let outcome = refuse(index, reason, now: now)
        pieces[index].resumeData = resumeData
        return outcome
    }

    /// Once every piece is in: hashes the partial file and moves it to the destination.
    ///
    /// - Throws: `checksumMismatch` when the bytes are not the expected file (the partial file is deleted, nothing
    ///   unverified is ever placed; the first time every piece is asked for again, the second time the transfer
    ///   fails); file system errors.
    package mutating func finish() throws -> URL {
        guard isComplete else {
            throw ModelDepotError(
                .incompleteSnapshot, "\(destination.lastPathComponent) is missing \(size - bytesDone) bytes.")
        }
        if size == 0, !FileManager.default.fileExists(atPath: partialFile.path) {
            guard FileManager.default.createFile(atPath: partialFile.path, contents: nil) else {
                throw ModelDepotError(.fileSystem, "Cannot create \(partialFile.path).")
            }
        }
        let digest = try FileDigests.sha256(ofFileAt: partialFile.path)
        guard digest == sha256 else {
            try restart()
            verificationFailures += 1
            var message =
                "\(destination.lastPathComponent) downloaded in the background has SHA-256 \(digest), not \(sha256); nothing was placed"
            if verificationFailures >= 2 {
                failure = "twice the bytes were not the expected file (SHA-256 \(digest))"
                message += ", and after twice the download stops: the source does not hold the file the Hub described."
            } else {
                message += " and it will be downloaded again."
            }
            throw ModelDepotError(.checksumMismatch, message)
        }
        if FileManager.default.fileExists(atPath: destination.path) {
            try FileManager.default.removeItem(at: destination)
        }
        try FileManager.default.moveItem(at: partialFile, to: destination)
        try? FileManager.default.removeItem(at: recordFile)
        return destination
    }

    /// Goes on after a failure, when the person asks again: every count starts over, the pieces already in stay,
    /// and `url` (a fresh signed link, say) replaces the old one.
    package mutating func retry(from url: URL) {
        self.url = url
        failure = nil
        verificationFailures = 0
        for index in pieces.indices {
            pieces[index].attempts = 0
            pieces[index].notBefore = nil
        }
    }

    /// Counts a failed answer for piece `index`: a wait before it is asked for again, or the end of the transfer
    /// when it failed too often.
    private mutating func refuse(
        _ index: Int, _ reason: String, lasting: Bool = false, retryAfter: Duration? = nil, now: Date
    ) -> Outcome {
        pieces[index].attempts += 1
        let limit = lasting ? retryRule.maxAttemptsForLastingErrors : retryRule.maxAttempts
        guard pieces[index].attempts < limit else {
            pieces[index].notBefore = nil
            failure = "\(reason) (\(pieces[index].attempts) times)"
            return .failed(failure!)
        }
        let wait = retryRule.delay(
            afterAttempt: pieces[index].attempts,
            retryAfter: retryAfter.map { Double($0.components.seconds) + Double($0.components.attoseconds) / 1e18 })
        pieces[index].notBefore = now.addingTimeInterval(wait)
        return .refused(reason)
    }

    /// Forgets every piece and every task out (their answers are then ignored as unknown) and the validators.
    private mutating func restart() throws {
        for index in pieces.indices {
            pieces[index] = Piece(start: pieces[index].start, end: pieces[index].end)
        }
        validators = nil
        try? FileManager.default.removeItem(at: partialFile)
    }
}
