import Foundation

extension BackgroundTransfer {
    /// One range of the file and the task that fetches it.
    package struct Piece: Codable, Sendable, Equatable {
        package var start: Int64
        package var end: Int64
        /// The system's task for it (`URLSessionTask.taskIdentifier`), while one is out.
        package var task: Int?
        package var done: Bool
        /// Answers for this piece that were refused or failed since it was last asked for with success.
        package var attempts = 0
        /// Not to be asked for before this (`URLSessionTask.earliestBeginDate`): the backoff after a failure.
        package var notBefore: Date?
        /// What the system handed back when a task failed part-way (`NSURLSessionDownloadTaskResumeData`), to
        /// continue rather than start the piece again.
        package var resumeData: Data?

        package var range: Range<Int64> { start..<end }

        init(start: Int64, end: Int64) {
            self.start = start
            self.end = end
            task = nil
            done = false
        }

        package init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            start = try container.decode(Int64.self, forKey: .start)
            end = try container.decode(Int64.self, forKey: .end)
            task = try container.decodeIfPresent(Int.self, forKey: .task)
            done = try container.decode(Bool.self, forKey: .done)
            attempts = try container.decodeIfPresent(Int.self, forKey: .attempts) ?? 0
            notBefore = try container.decodeIfPresent(Date.self, forKey: .notBefore)
            resumeData = try container.decodeIfPresent(Data.self, forKey: .resumeData)
        }
    }

    /// How often a piece is asked for again, and how long to wait between.
    package struct RetryRule: Codable, Sendable, Equatable {
        /// Failed answers for one piece before the transfer fails.
        package var maxAttempts = 5
        /// Failed answers that will not change by waiting (401, 403, 404, 410) before the transfer fails.
        package var maxAttemptsForLastingErrors = 2
        /// The first wait; each further failure doubles it, up to ``maxDelay``.
        package var firstDelay: TimeInterval = 30
        package var maxDelay: TimeInterval = 30 * 60

        package init() {}

        /// The wait before asking again after the `attempts`-th failure; a server's `Retry-After` wins when longer.
        func delay(afterAttempt attempts: Int, retryAfter: TimeInterval? = nil) -> TimeInterval {
            let doubled = firstDelay * pow(2, Double(max(0, attempts - 1)))
            return max(min(doubled, maxDelay), min(retryAfter ?? 0, maxDelay))
        }
    }

    /// What became of a piece the system handed back.
    package enum Outcome: Sendable, Equatable {
        /// Written into the partial file.
        case spliced(Range<Int64>)
        /// A task this transfer does not know, or a piece already written: ignored.
        case duplicate
        /// Not written; the piece will be asked for again after a wait. The reason says why.
        case refused(String)
        /// The file changed upstream: every piece will be asked for again, and these tasks still out must be
        /// cancelled (their answers are of the old file).
        case restarted(String, cancel: [Int])
        /// Refused too often: the transfer stops here with the pieces it has (``failure`` says why).
        case failed(String)
    }

    /// A request to hand to the system for one piece.
    package struct PieceRequest: Sendable, Equatable {
        package var piece: Int
        package var url: URL
        package var headers: [String: String]
        /// What the task will receive (`countOfBytesClientExpectsToReceive`).
        package var expectedBytes: Int64
        /// Not before (`earliestBeginDate`); nil: at once.
        package var notBefore: Date?
        /// Continue the failed task this came from (`downloadTask(withResumeData:)`) rather than start afresh.
        package var resumeData: Data?

        package init(
            piece: Int, url: URL, headers: [String: String], expectedBytes: Int64, notBefore: Date? = nil,
            resumeData: Data? = nil
        ) {
            self.piece = piece
            self.url = url
            self.headers = headers
            self.expectedBytes = expectedBytes
            self.notBefore = notBefore
            self.resumeData = resumeData
        }
    }
}
