import ServiceLifecycle

/// Records the mirror's counters in its dashboard's traffic history once an interval, so the charts cover the
/// hour whether or not anyone watched it.
struct TrafficSampler: Service {
    let dashboard: MirrorDashboard
    let interval: Duration

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                dashboard.recordTraffic()
                try? await Task.sleep(for: interval)
            }
        }
    }
}
