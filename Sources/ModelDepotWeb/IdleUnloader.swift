import Logging
import ModelDepotInference
import ServiceLifecycle

/// Unloads the models nobody used for the runtimes' idle time (``ModelRuntimes/idleTime``), looking once a
/// minute until the app stops.
struct IdleUnloader: Service {
    let runtimes: ModelRuntimes
    var every: Duration = .seconds(60)
    let logger: Logger

    func run() async throws {
        guard let idleTime = runtimes.idleTime else { return }
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try await Task.sleep(for: every)
                for name in await runtimes.unloadIdle() {
                    logger.notice("unloaded \(name): unused for \(idleTime)")
                }
            }
        }
    }
}
