import Synchronization

/// An instant on a test clock: a duration since the clock was made.
public struct TestInstant: InstantProtocol, Sendable {
    public var offset: Duration
    public init(offset: Duration) { self.offset = offset }
    public func advanced(by duration: Duration) -> TestInstant { TestInstant(offset: offset + duration) }
    public func duration(to other: TestInstant) -> Duration { other.offset - offset }
    public static func < (lhs: TestInstant, rhs: TestInstant) -> Bool { lhs.offset < rhs.offset }
}

/// A clock whose sleeps return at once, moving its time forward by the amount slept, and recording each
/// sleep — so a test sees that a backoff of 2 s happened without waiting 2 s.
public final class ImmediateClock: Clock, Sendable {
    public typealias Instant = TestInstant
    private let state = Mutex((now: TestInstant(offset: .zero), sleeps: [Duration]()))

    public init() {}

    public var now: TestInstant { state.withLock { $0.now } }
    public var minimumResolution: Duration { .zero }

    /// Every duration slept so far, in order.
    public var sleeps: [Duration] { state.withLock { $0.sleeps } }

    public func sleep(until deadline: TestInstant, tolerance: Duration?) async throws {
        try Task.checkCancellation()
        state.withLock { state in
            state.sleeps.append(state.now.duration(to: deadline))
            if state.now < deadline { state.now = deadline }
        }
        await Task.yield()
    }
}
