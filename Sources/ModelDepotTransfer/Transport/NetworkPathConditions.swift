#if canImport(Network)
    // Apple platforms only, never compiled on the machine this package is tested on (Linux). The decisions it feeds
    // (NetworkPolicy.decision, whileAllowed, waitUntilAllowed) are portable and tested there with a scripted path.
    import Network
    import Synchronization

    /// The device's network as `NWPathMonitor` reports it, for ``NetworkPolicy`` to decide on: usable or not
    /// (`NWPath.status == .satisfied`), expensive (`NWPath.isExpensive`: cellular, a personal hotspot), constrained
    /// (`NWPath.isConstrained`: Low Data Mode). ``DownloadConfiguration`` uses ``shared`` by default on Apple
    /// platforms, so a Wi-Fi-only policy holds without the app doing anything.
    package final class NetworkPathConditions: NetworkConditions {
        /// One monitor for the process.
        package static let shared = NetworkPathConditions()

        private struct State {
            var path: NetworkPathStatus?
            var watchers: [UInt64: AsyncStream<NetworkPathStatus>.Continuation] = [:]
            var nextWatcher: UInt64 = 0
            var firstPath: [CheckedContinuation<NetworkPathStatus, Never>] = []
        }

        private let monitor = NWPathMonitor()
        private let state = Mutex(State())

        package init() {
            // NWPathMonitor.pathUpdateHandler: called with the current path once started, then on each change.
            monitor.pathUpdateHandler = { [weak self] path in
                self?.update(
                    NetworkPathStatus(
                        isSatisfied: path.status == .satisfied, isExpensive: path.isExpensive,
                        isConstrained: path.isConstrained))
            }
            // NWPathMonitor.start(queue:): updates arrive on this queue.
            monitor.start(queue: DispatchQueue(label: "ModelDepot network path"))
        }

        deinit { monitor.cancel() }

        package func current() async -> NetworkPathStatus {
            // The first update comes right after start; until then, wait for it rather than guess.
            await withCheckedContinuation { continuation in
                let known = state.withLock { state -> NetworkPathStatus? in
                    if let path = state.path { return path }
                    state.firstPath.append(continuation)
                    return nil
                }
                if let known { continuation.resume(returning: known) }
            }
        }

        package func changes() -> AsyncStream<NetworkPathStatus> {
            let (stream, continuation) = AsyncStream<NetworkPathStatus>.makeStream(bufferingPolicy: .bufferingNewest(1))
            let id = state.withLock { state in
                defer { state.nextWatcher += 1 }
                state.watchers[state.nextWatcher] = continuation
                return state.nextWatcher
            }
            continuation.onTermination = { [weak self] _ in
                self?.state.withLock { _ = $0.watchers.removeValue(forKey: id) }
            }
            return stream
        }

        private func update(_ path: NetworkPathStatus) {
            let (watchers, waiting) = state.withLock { state in
                let changed = state.path != path
                state.path = path
                defer { state.firstPath.removeAll() }
                return (changed ? Array(state.watchers.values) : [], state.firstPath)
            }
            for continuation in waiting { continuation.resume(returning: path) }
            for watcher in watchers { watcher.yield(path) }
        }
    }
#endif
