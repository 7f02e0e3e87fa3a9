import Foundation
import ModelDepotCore
import Synchronization

/// Spaces a client's calls out when a server's rate limit runs low, instead of running into it: once a response
/// announces few requests left (``RateLimit``), the next calls are spread over what is left of the window; with none
/// left, the next call waits for the window to reset. One per client, shared by its copies.
package final class RateLimitPacer: Sendable {
    private let clock: EngineClock
    /// The longest single wait (the retry policy's `maxRetryAfter`, `--max-rate-limit-wait`): a server cannot make
    /// a client sleep longer between two calls.
    private let longestWait: Duration
    private let state = Mutex<(limit: RateLimit, seenAt: Duration)?>(nil)

    package init(clock: any Clock<Duration>, longestWait: Duration) {
        self.clock = EngineClock(clock)
        self.longestWait = longestWait
    }

    /// Remembers what a response announced.
    package func observe(_ limit: RateLimit?) {
        guard let limit else { return }
        let now = clock.elapsed()
        state.withLock { $0 = (limit, now) }
    }

    /// How long the next call should wait, and the limit that says so; nil to go at once. Counts the call
    /// against the remembered limit, so calls made at once are spread too.
    package func nextWait() -> (wait: Duration, limit: RateLimit)? {
        let now = clock.elapsed()
        return state.withLock { state -> (Duration, RateLimit)? in
            guard var (limit, seenAt) = state else { return nil }
            let left = limit.reset - (now - seenAt)
            guard left > .zero else {
                state = nil  // the window is over: the server's next answer says where things stand
                return nil
            }
            // "Low": a twentieth of the quota, at least the last two requests.
            let low = max(2, (limit.quota ?? 0) / 20)
            defer {
                limit.remaining = max(0, limit.remaining - 1)
                state = (limit, seenAt)
            }
            guard limit.remaining <= low else { return nil }
            var shown = limit
            shown.reset = left
            return (min(longestWait, left / (limit.remaining + 1)), shown)
        }
    }

    /// Waits as ``nextWait()`` says, telling `waiting` first; true when it waited.
    @discardableResult
    package func pace(waiting: ((TransferWait) -> Void)?) async throws -> Bool {
        guard let (wait, limit) = nextWait() else { return false }
        waiting?(.rateLimit(delay: wait, reason: "pacing calls to stay within \(limit)"))
        do {
            try await clock.sleep(for: wait)
        } catch {
            throw ModelDepotError.cancelled()
        }
        return true
    }
}
