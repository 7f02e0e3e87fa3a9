import ModelDepotCore

/// How many times, and how long apart, a failed request is tried again.
///
/// Delays grow exponentially from ``baseDelay`` by ``multiplier`` up to ``maxDelay``, each scaled by a random
/// factor in `1 - jitter ... 1` so that many clients do not retry in lockstep. A server's `Retry-After` wins
/// when it asks for longer, up to ``maxRetryAfter``; beyond that the download fails with the server's time.
public struct RetryPolicy: Sendable, Equatable {
    /// Attempts per request, the first included. `1` disables retries.
    public var maxAttempts: Int
    /// The wait before the second attempt.
    public var baseDelay: Duration
    /// The longest wait between attempts.
    public var maxDelay: Duration
    /// How much each wait grows over the one before.
    public var multiplier: Double
    /// The fraction (0...1) of each delay that is randomised.
    public var jitter: Double
    /// The longest `Retry-After` the engine waits for; longer ones fail with `ModelDepotError.retryAfter` set.
    public var maxRetryAfter: Duration
    /// How long a request that makes no progress is retried, attempts and waits together, before giving up with
    /// attempts left: a server that accepts connections and never answers costs this long, not
    /// attempts × timeouts. Progress (for downloads) starts it again. A 429's `Retry-After` is honoured
    /// regardless (up to ``maxRetryAfter``): the server said when to come back. Nil: only ``maxAttempts``.
    public var budget: Duration?

    /// A policy; waits grow from `baseDelay` by `multiplier` up to `maxDelay`, with jitter.
    public init(
        maxAttempts: Int = 8,
        baseDelay: Duration = .milliseconds(250),
        maxDelay: Duration = .seconds(30),
        multiplier: Double = 2,
        jitter: Double = 0.5,
        maxRetryAfter: Duration = .seconds(300),
        budget: Duration? = .seconds(90)
    ) {
        self.budget = budget
        self.maxAttempts = max(1, maxAttempts)
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
        self.multiplier = max(1, multiplier)
        self.jitter = min(1, max(0, jitter))
        self.maxRetryAfter = maxRetryAfter
    }

    /// The engine's default: 8 attempts, waits from 0.25 s doubling up to 30 s, a 90 s budget without progress.
    public static let `default` = RetryPolicy()
    /// One attempt, no retries.
    public static let none = RetryPolicy(maxAttempts: 1)

    /// The wait before attempt `attempt + 1`, given that `attempt` attempts (1-based) have failed.
    ///
    /// - Parameters:
    ///   - attempt: how many attempts have failed so far.
    ///   - retryAfter: the wait the server asked for (`Retry-After`, `RateLimit`), which takes precedence.
    ///   - random: a value in `0..<1`; injected so that tests are deterministic.
    public func delay(afterAttempt attempt: Int, retryAfter: Duration? = nil, random: Double) -> Duration {
        let exponent = Double(max(0, attempt - 1))
        let base = Double(baseDelay.components.seconds) + Double(baseDelay.components.attoseconds) / 1e18
        let cap = Double(maxDelay.components.seconds) + Double(maxDelay.components.attoseconds) / 1e18
        let raw = min(cap, base * pow(multiplier, exponent))
        let scaled = raw * (1 - jitter * min(max(random, 0), 1))
        let backoff = Duration.milliseconds(Int64((scaled * 1000).rounded()))
        if let retryAfter, retryAfter > backoff {
            // The server's wait, and up to a second more (a tenth of a short wait), so clients it turned away
            // together do not come back in the same instant.
            let spread = min(1.0, Double(retryAfter.components.seconds) / 10) * min(max(random, 0), 1)
            return retryAfter + .milliseconds(Int64((spread * 1000).rounded()))
        }
        return backoff
    }

    private func pow(_ base: Double, _ exponent: Double) -> Double {
        var result = 1.0
        var remaining = Int(exponent)
        while remaining > 0 && result < 1e12 {
            result *= base
            remaining -= 1
        }
        return result
    }
}

extension RetryPolicy {
    /// Runs `operation`, again after each transient `ModelDepotError` with this policy's waits.
    ///
    /// - Parameters:
    ///   - clock: every wait sleeps on it (tests inject one that does not).
    ///   - random: jitter source in `0..<1`.
    ///   - waiting: told before each wait (a ``TransferWait/retry(attempt:maxAttempts:delay:reason:)``)
    ///     and after it (nil), so a progress display can say why nothing moves.
    ///   - operation: one attempt.
    package func retrying<T>(
        clock: any Clock<Duration>, random: () -> Double, waiting: (@Sendable (TransferWait?) -> Void)? = nil,
        _ operation: () async throws -> T
    ) async throws -> T {
        try await run(clock: EngineClock(clock), random: random, waiting: waiting, operation)
    }

    /// The one retry loop: the engine's requests, the Hub client and the inference provider all retry
    /// through it. An attempt that fails with a transient error is tried again after this policy's wait
    /// (or the server's `Retry-After`), until the attempts or the ``budget`` run out.
    ///
    /// - Parameters:
    ///   - classify: turns what an attempt threw into the failure to judge; nil rethrows it unchanged.
    ///   - progressMade: asked after each failure; when the failed attempt moved data forward, the attempt
    ///     count and the budget start again (a long transfer over a flaky link is not failed for errors it
    ///     recovered from).
    ///   - recover: looks at each failure first (with whether it made progress); true tries again at once
    ///     without counting an attempt (a fresh signed URL), a throw ends the loop with that error.
    ///   - willRetry: told the failure, the attempt count and the wait before each retry (logs, the
    ///     engine's connection controller).
    ///   - waiting: told before each wait and after it (nil).
    package func run<T>(
        clock: EngineClock, random: () -> Double,
        classify: (any Error) -> ModelDepotError? = { $0 as? ModelDepotError },
        progressMade: () -> Bool = { false },
        recover: (ModelDepotError, _ madeProgress: Bool) throws -> Bool = { _, _ in false },
        willRetry: (ModelDepotError, _ attempt: Int, _ delay: Duration) -> Void = { _, _, _ in },
        waiting: ((TransferWait?) -> Void)? = nil,
        _ operation: () async throws -> T
    ) async throws -> T {
        var attempt = 0
        var budget = RetryBudget(limit: self.budget, now: clock.elapsed())
        while true {
            budget.attemptStarts(at: clock.elapsed())
            do {
                return try await operation()
            } catch {
                guard let failure = classify(error) else { throw error }
                let moved = progressMade()
                budget.attemptFailed(at: clock.elapsed(), madeProgress: moved)
                if moved { attempt = 0 }
                if try recover(failure, moved) { continue }
                attempt += 1
                let delay = try wait(after: failure, attempt: attempt, random: random())
                if let exhausted = budget.exhausted(
                    by: failure, attempts: attempt, at: clock.elapsed(), nextDelay: delay)
                {
                    throw exhausted
                }
                willRetry(failure, attempt, delay)
                try await sleep(delay, before: attempt, of: failure, clock: clock, waiting: waiting)
            }
        }
    }

    /// Waits on `clock` before attempt `attempt + 1` (1-based count of failed attempts) after `error`, or
    /// throws when it is not worth another attempt: the error is not transient (`Code.transient`: network,
    /// stall, 5xx, 429), the attempts are used up, or the server asked to wait longer than ``maxRetryAfter``.
    /// For callers that keep their own loop (a stream that must not be restarted after its first byte).
    package func backOff(
        after error: ModelDepotError, attempt: Int, clock: any Clock<Duration>, random: Double,
        waiting: (@Sendable (TransferWait?) -> Void)? = nil
    ) async throws {
        let delay = try wait(after: error, attempt: attempt, random: random)
        try await sleep(delay, before: attempt, of: error, clock: EngineClock(clock), waiting: waiting)
    }

    /// The wait before attempt `attempt + 1` after `failure`, or the error to give up with.
    private func wait(after failure: ModelDepotError, attempt: Int, random: Double) throws -> Duration {
        guard ModelDepotError.Code.transient.contains(failure.code) else { throw failure }
        if let retryAfter = failure.retryAfter, retryAfter > maxRetryAfter { throw failure }
        guard attempt < maxAttempts else {
            throw failure.withMessage("\(failure.message) Gave up after \(attempt) attempts; try again later.")
        }
        return delay(afterAttempt: attempt, retryAfter: failure.retryAfter, random: random)
    }

    private func sleep(
        _ delay: Duration, before attempt: Int, of failure: ModelDepotError, clock: EngineClock,
        waiting: ((TransferWait?) -> Void)?
    ) async throws {
        // A server that rate-limited and said how long is waited for as it asked, not retried on a schedule.
        let rateLimited = failure.code == .rateLimited && failure.retryAfter != nil
        waiting?(
            rateLimited
                ? .rateLimit(delay: delay, reason: failure.message)
                : .retry(attempt: attempt, maxAttempts: maxAttempts, delay: delay, reason: failure.message))
        defer { waiting?(nil) }
        do {
            try await clock.sleep(for: delay)
        } catch {
            throw ModelDepotError.cancelled()
        }
    }
}
