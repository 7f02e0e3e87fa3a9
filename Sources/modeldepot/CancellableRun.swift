#if os(Linux) || os(macOS)
    import Dispatch
    import Foundation
    import ModelDepot

    /// Runs an operation and cancels it on SIGINT or SIGTERM, so a download stops cleanly and keeps what it
    /// has for the next run instead of dying mid-write.
    enum CancellableRun {
        /// `onSignal` runs (besides cancelling the operation's task) when a signal arrives: a manager's task is
        /// cancelled through it, since cancelling the task that waits for it would only stop the waiting.
        static func run<T: Sendable>(
            onSignal: @escaping @Sendable () async -> Void = {},
            _ operation: @escaping @Sendable () async throws -> T
        ) async throws -> T {
            let task = Task { try await operation() }
            let sources = [SIGINT, SIGTERM].map { signalNumber -> any DispatchSourceSignal in
                signal(signalNumber, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
                source.setEventHandler {
                    Task {
                        await onSignal()
                        task.cancel()
                    }
                }
                source.resume()
                return source
            }
            defer { sources.forEach { $0.cancel() } }
            return try await task.value
        }
    }

    extension ModelDownloadTask {
        /// Renders the task's progress until it ends and returns its snapshot; SIGINT or SIGTERM cancels it (what
        /// arrived stays for the next run).
        func follow(rendering renderer: ProgressRenderer) async throws -> Snapshot {
            try await CancellableRun.run(onSignal: { await self.cancel() }) {
                for await event in self.progress { renderer.render(event) }
                return try await self.result()
            }
        }
    }
#endif
