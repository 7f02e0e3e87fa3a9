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
        if let retryAfter, retryAfter > backoff { return retryAfter }
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
    public func retrying<T>(
        clock: any Clock<Duration>, random: () -> Double, waiting: (@Sendable (TransferWait?) -> Void)? = nil,
        _ operation: () async throws -> T
    ) async throws -> T {
        let elapsed = EngineClock(clock)
        var attempt = 0
        var budget = RetryBudget(limit: self.budget, now: elapsed.elapsed())
        while true {
            budget.attemptStarts(at: elapsed.elapsed())
            do {
                return try await operation()
            } catch let error as ModelDepotError {
                attempt += 1
                let now = elapsed.elapsed()
                budget.attemptFailed(at: now, madeProgress: false)
                if ModelDepotError.Code.transient.contains(error.code),
                    let exhausted = budget.exhausted(
                        by: error, attempts: attempt, at: now,
                        nextDelay: delay(afterAttempt: attempt, retryAfter: error.retryAfter, random: 0))
                {
                    throw exhausted
                }
                try await backOff(after: error, attempt: attempt, clock: clock, random: random(), waiting: waiting)
            }
        }
    }

    /// Waits on `clock` before attempt `attempt + 1` (1-based count of failed attempts) after `error`, or
    /// rethrows `error` when it is not transient (`Code.transient`: network, stall, 5xx, 429), the attempts are
    /// used up, or the server
    /// asked to wait longer than ``maxRetryAfter``.
    public func backOff(
        after error: ModelDepotError, attempt: Int, clock: any Clock<Duration>, random: Double,
        waiting: (@Sendable (TransferWait?) -> Void)? = nil
    ) async throws {
        guard ModelDepotError.Code.transient.contains(error.code), attempt < maxAttempts else { throw error }
        if let wait = error.retryAfter, wait > maxRetryAfter { throw error }
        let delay = delay(afterAttempt: attempt, retryAfter: error.retryAfter, random: random)
        waiting?(.retry(attempt: attempt, maxAttempts: maxAttempts, delay: delay, reason: error.message))
        defer { waiting?(nil) }
        do {
            try await clock.sleep(for: delay)
        } catch {
            throw ModelDepotError(.cancelled, "Cancelled while waiting to try again.")
        }
    }
}
