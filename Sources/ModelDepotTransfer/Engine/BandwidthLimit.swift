import Foundation
import ModelDepotCore
import Synchronization

/// One bandwidth cap shared by every connection and every file that holds it (`--max-rate`): the bytes all of
/// them receive together stay under `bytesPerSecond`, measured over any window of a second or more. Change
/// the rate while transfers run; nil lifts the cap.
///
/// ```swift
/// var configuration = ModelManager.Configuration()
/// configuration.bandwidth.bytesPerSecond = 20_000_000  // 20 MB/s
/// let models = try ModelManager(configuration: configuration)
/// models.bandwidth?.bytesPerSecond = 5_000_000  // later: slower, for every running download
/// ```
///
/// A download waits before it writes bytes it has read, so the connections slow down as TCP lets a server
/// fill only the receive buffers the client drains; nothing is discarded.
public final class BandwidthLimit: Sendable {
    private let bucket: Mutex<TokenBucket>
    private let clock: EngineClock

    /// A cap of `bytesPerSecond` (nil: none yet), timed by `clock`.
    public convenience init(bytesPerSecond: Int64?) {
        self.init(bytesPerSecond: bytesPerSecond, clock: ContinuousClock())
    }

    /// A cap timed by an injected clock (tests).
    public init(bytesPerSecond: Int64?, clock: any Clock<Duration>) {
        self.clock = EngineClock(clock)
        bucket = Mutex(TokenBucket(bytesPerSecond: bytesPerSecond, now: .zero))
    }

    /// The cap, in bytes per second; nil when there is none. Setting it applies to bytes not yet granted.
    public var bytesPerSecond: Int64? {
        get { bucket.withLock { $0.bytesPerSecond } }
        set {
            let now = clock.elapsed()
            bucket.withLock { $0.setRate(newValue, now: now) }
        }
    }

    /// Waits until `count` bytes may pass. The wait is slept in slices of at most `slice`, calling `waiting`
    /// between them, so a stall watchdog can tell a throttled connection from a dead one.
    package func take(_ count: Int, slice: Duration = .seconds(1), waiting: () -> Void = {}) async throws {
        let now = clock.elapsed()
        var delay = bucket.withLock { $0.reserve(count, now: now) }
        while delay > .zero {
            let step = min(delay, slice)
            try await clock.sleep(for: step)
            delay -= step
            waiting()
        }
    }
}

/// The arithmetic of the cap, with time passed in: a token bucket that lends. Each request takes its bytes at
/// once, possibly into debt, and is told how long to wait until the debt is paid at the rate, so concurrent
/// callers queue behind each other in the order they asked. At most `burst` of unused time builds up.
package struct TokenBucket: Sendable, Equatable {
    /// How long an idle cap saves up: after a pause, this much time's worth of bytes passes at once.
    package static let burst: Duration = .milliseconds(250)

    package private(set) var bytesPerSecond: Int64?
    /// Bytes that may pass now; negative while callers wait for bytes already granted.
    package private(set) var available: Double = 0
    private var updated: Duration

    package init(bytesPerSecond: Int64?, now: Duration) {
        self.bytesPerSecond = bytesPerSecond.map { max(1, $0) }
        updated = now
    }

    package mutating func setRate(_ rate: Int64?, now: Duration) {
        refill(now: now)
        bytesPerSecond = rate.map { max(1, $0) }
        available = min(available, capacity)
    }

    /// Grants `count` bytes and says how long the caller must wait before using them.
    package mutating func reserve(_ count: Int, now: Duration) -> Duration {
        guard let rate = bytesPerSecond else { return .zero }
        refill(now: now)
        available -= Double(count)
        guard available < 0 else { return .zero }
        return .nanoseconds(Int64((-available / Double(rate) * 1e9).rounded(.up)))
    }

    private var capacity: Double {
        Double(bytesPerSecond ?? 0)
            * (Double(Self.burst.components.seconds) + Double(Self.burst.components.attoseconds) / 1e18)
    }

    private mutating func refill(now: Duration) {
        defer { updated = max(updated, now) }
        guard let rate = bytesPerSecond, now > updated else { return }
        let seconds = Double((now - updated).components.seconds) + Double((now - updated).components.attoseconds) / 1e18
        available = min(capacity, available + seconds * Double(rate))
    }
}
