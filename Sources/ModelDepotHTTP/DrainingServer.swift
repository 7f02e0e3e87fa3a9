import Foundation
import Logging
import ServiceLifecycle
import Synchronization

/// How both HTTP servers run: their services in one group that SIGTERM, SIGINT or the calling task's cancellation
/// drains — the listening socket closes, the services that end long-lived answers (event streams) are told, and
/// responses in flight get up to `drainTimeout`. Then every connection still open is closed (``ConnectionDrain``),
/// a second later whatever is left is cancelled, and should anything still hold on half a second after that,
/// `onStuck` is called (the command line exits there; a library caller that passes nothing keeps waiting).
///
/// So a stop ends within `drainTimeout` + 2 s whatever the clients do.
public enum DrainingServer {
    /// The time between closing the connections and cancelling the services: enough for handlers whose writes
    /// just failed to return on their own.
    static let cancelAfterCutOff: Duration = .seconds(1)
    /// The time after that cancellation before `onStuck`.
    static let stuckAfterCancel: Duration = .milliseconds(500)

    public static func run(
        _ services: [ServiceGroupConfiguration.ServiceConfiguration], drainTimeout: Duration,
        connections: ConnectionDrain, logger: Logger, onStuck: (@Sendable () -> Void)? = nil
    ) async throws {
        let finished = Mutex(false)
        // Last in the list, so the group tells it first (it signals services in reverse order, each after the one
        // before has returned); it returns at once, leaving the deadline running on its own.
        let deadline = DrainDeadline(logger: logger) {
            try? await Task.sleep(for: drainTimeout)
            if finished.withLock({ $0 }) { return }
            let open = connections.cutOff()
            if open > 0 {
                logger.warning(
                    "drain timeout reached: closed \(open) connection(s) still answering (their clients see a body cut short)"
                )
            }
            guard let onStuck else { return }
            try? await Task.sleep(for: cancelAfterCutOff + stuckAfterCancel)
            if finished.withLock({ $0 }) { return }
            logger.error(
                "the stop did not end \(cancelAfterCutOff + stuckAfterCancel) after the drain timeout: exiting")
            onStuck()
        }
        var configuration = ServiceGroupConfiguration(
            services: services + [.init(service: deadline, successTerminationBehavior: .ignore)],
            gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        configuration.maximumGracefulShutdownDuration = drainTimeout + cancelAfterCutOff
        let group = ServiceGroup(configuration: configuration)
        // The group runs in a task of its own: a child task would be cancelled with this one, and cancelled services
        // stop at once instead of draining. (A server stopped by its task's cancellation while NIO was handing it a
        // new connection used to trap in NIO's async writer.)
        let running = Task { try await group.run() }
        defer { finished.withLock { $0 = true } }
        try await withTaskCancellationHandler {
            try await running.value
        } onCancel: {
            Task { await group.triggerGracefulShutdown() }
        }
    }
}

/// Starts the drain's clock when the group starts to stop, and returns at once so the other services are told.
struct DrainDeadline: Service {
    let logger: Logger
    let onDrain: @Sendable () async -> Void

    func run() async throws {
        // Returns when the stop begins; throws when the group is cancelled instead (no drain then).
        guard (try? await gracefulShutdown()) != nil else { return }
        // Unstructured: the group cancels its services at the end of the drain, and this must outlive that.
        Task { await onDrain() }
    }
}
