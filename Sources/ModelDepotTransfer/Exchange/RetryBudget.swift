import ModelDepotCore

/// How long one request may go on failing without progress (``RetryPolicy/budget``), as the one retry loop
/// (`RetryPolicy.run`) applies it. An attempt is not started unless the wait before it and the longest attempt
/// seen so far still fit: a server that accepts connections and never answers costs the budget, not attempts ×
/// timeouts.
struct RetryBudget {
    let limit: Duration?
    private var streakStart: Duration
    private var attemptStart: Duration
    private var longestAttempt = Duration.zero

    init(limit: Duration?, now: Duration) {
        self.limit = limit
        streakStart = now
        attemptStart = now
    }

    mutating func attemptStarts(at now: Duration) { attemptStart = now }

    /// Books an attempt that failed at `now`. One that moved data forward starts the budget again (its length
    /// says nothing about a failing server).
    mutating func attemptFailed(at now: Duration, madeProgress: Bool) {
        if madeProgress {
            streakStart = now
            longestAttempt = .zero
        } else {
            longestAttempt = max(longestAttempt, now - attemptStart)
        }
    }

    /// The error to give up with, when another attempt after `nextDelay` would not fit; nil to go on. A 429
    /// is waited out regardless (up to ``RetryPolicy/maxRetryAfter``): the server said when to come back.
    func exhausted(by failure: ModelDepotError, attempts: Int, at now: Duration, nextDelay: Duration)
        -> ModelDepotError?
    {
        guard let limit, failure.code != .rateLimited, now - streakStart + nextDelay + longestAttempt > limit else {
            return nil
        }
        return failure.withMessage(
            "\(failure.message) Gave up after \(attempts) attempts without progress over \(Self.seconds(now - streakStart)) (the retry budget is \(Self.seconds(limit))); try again later."
        )
    }

    /// `12 s`, for messages.
    static func seconds(_ duration: Duration) -> String {
        "\(Int((Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18).rounded())) s"
    }
}
