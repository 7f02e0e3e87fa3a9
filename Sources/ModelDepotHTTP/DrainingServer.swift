import Logging
import ServiceLifecycle

/// How both HTTP servers run: their services in one group that SIGTERM, SIGINT or the calling task's cancellation
/// drains — the listening socket closes, the services that end long-lived answers (event streams) are told, and
/// responses in flight get up to `drainTimeout` before what is left is cancelled.
public enum DrainingServer {
    public static func run(
        _ services: [ServiceGroupConfiguration.ServiceConfiguration], drainTimeout: Duration, logger: Logger
    ) async throws {
        var configuration = ServiceGroupConfiguration(
            services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        configuration.maximumGracefulShutdownDuration = drainTimeout
        let group = ServiceGroup(configuration: configuration)
        // The group runs in a task of its own: a child task would be cancelled with this one, and cancelled services
        // stop at once instead of draining. (A server stopped by its task's cancellation while NIO was handing it a
        // new connection used to trap in NIO's async writer.)
        let running = Task { try await group.run() }
        try await withTaskCancellationHandler {
            try await running.value
        } onCancel: {
            Task { await group.triggerGracefulShutdown() }
        }
    }
}
