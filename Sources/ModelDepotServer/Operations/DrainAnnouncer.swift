import Logging
import ServiceLifecycle

/// Says in the log when the mirror starts draining (a signal or a cancellation), so an operator watching it stop
/// knows why it has not exited yet: it waits for the responses in flight. Tells the mounted route groups too, which end their
/// event streams.
struct DrainAnnouncer: Service {
    let logger: Logger
    var onDrain: @Sendable () -> Void = {}

    func run() async throws {
        try? await gracefulShutdown()
        logger.notice("draining: no new connections; finishing the responses in flight, then exiting")
        onDrain()
    }
}
