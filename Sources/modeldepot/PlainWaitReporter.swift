#if os(Linux) || os(macOS)
    import Foundation
    import ModelDepot
    import Synchronization

    /// Says in plain output (a log, a pipe) why a transfer is standing still. A retry is told at once; "waiting for
    /// host:port" only once the same wait has lasted `patience`, so that a log of fast requests is not a wall of
    /// waits nobody noticed (every request starts with one).
    final class PlainWaitReporter: Sendable {
        private struct State {
            var current: String?
            /// Bumped on every change, so a delayed line for a wait that has ended is dropped.
            var generation = 0
            var pending: Task<Void, Never>?
        }

        private let patience: Duration
        private let sleep: @Sendable (Duration) async throws -> Void
        private let write: @Sendable (String) -> Void
        private let state = Mutex(State())

        /// - Parameters:
        ///   - patience: how long a wait for a server lasts before it is told.
        ///   - clock: the clock `patience` is measured on (a test clock in tests).
        ///   - write: where a line goes (stderr in the CLI).
        init<C: Clock<Duration>>(
            patience: Duration = .seconds(2), clock: C = ContinuousClock(), write: @escaping @Sendable (String) -> Void
        ) {
            self.patience = patience
            self.sleep = { try await clock.sleep(for: $0) }
            self.write = write
        }

        deinit { state.withLock { $0.pending?.cancel() } }

        /// The transfer now waits for `text` (nil: it moves again); `isServerWait` marks a wait for an answer, as
        /// opposed to a retry's pause.
        func update(_ text: String?, isServerWait: Bool) {
            let (generation, changed) = state.withLock { state -> (Int, Bool) in
                guard state.current != text else { return (state.generation, false) }
                state.current = text
                state.generation += 1
                state.pending?.cancel()
                state.pending = nil
                return (state.generation, true)
            }
            guard changed, let text else { return }
            guard isServerWait else {
                write(text + "\n")
                return
            }
            let task = Task { [weak self, patience, sleep] in
                do { try await sleep(patience) } catch { return }
                guard let self, self.state.withLock({ $0.generation == generation }) else { return }
                self.write(text + "\n")
            }
            state.withLock { state in
                if state.generation == generation { state.pending = task } else { task.cancel() }
            }
        }
    }
#endif
