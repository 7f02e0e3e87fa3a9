#if os(Linux) || os(macOS)
    import ModelDepotInference
    import Synchronization

    /// The local model servers a command started. Whatever ends the process, none outlives it: an exit through
    /// ``ExitCleanup`` (a second signal, a closed stdout) stops each before exiting, and ``stopAll()`` stops them in
    /// order when the command ends.
    final class LocalServers: Sendable {
        private let started = Mutex<[(server: LocalModelServer, cleanup: Int)]>([])

        func add(_ server: LocalModelServer) {
            let cleanup = ExitCleanup.register { server.stopBeforeExit() }
            started.withLock { $0.append((server, cleanup)) }
        }

        /// Stops every server (SIGTERM, SIGKILL after a grace period) and waits for each to end.
        func stopAll() async {
            let servers = started.withLock { started in
                defer { started.removeAll() }
                return started
            }
            for (server, cleanup) in servers {
                await server.stop()
                ExitCleanup.unregister(cleanup)
            }
        }
    }
#endif
