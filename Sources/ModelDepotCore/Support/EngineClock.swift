/// A type-erased `Clock<Duration>`: the engine measures elapsed time and sleeps only through it, so tests
/// drive time by hand.
package struct EngineClock: Sendable {
    private let elapsedSinceStart: @Sendable () -> Duration
    private let sleeper: @Sendable (Duration) async throws -> Void

    package init(_ clock: any Clock<Duration>) {
        self.init(opening: clock)
    }

    private init<C: Clock<Duration>>(opening clock: C) {
        let start = clock.now
        elapsedSinceStart = { start.duration(to: clock.now) }
        sleeper = { duration in try await clock.sleep(for: duration) }
    }

    /// Time since this value was made.
    package func elapsed() -> Duration { elapsedSinceStart() }

    /// Sleeps on the injected clock; throws `CancellationError` when the task is cancelled.
    package func sleep(for duration: Duration) async throws {
        guard duration > .zero else { return }
        try await sleeper(duration)
    }
}
