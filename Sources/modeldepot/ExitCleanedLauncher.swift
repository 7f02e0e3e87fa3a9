#if os(Linux) || os(macOS)
    import Foundation
    import ModelDepot
    import ModelDepotInference

    /// A launcher whose local servers are stopped however the process ends: each is registered with
    /// ``ExitCleanup`` (a second signal, a closed stdout stop it before exiting) while it runs, and unregistered when
    /// it is unloaded. The servers also get SIGTERM when this process dies (Linux) and are recorded for the next
    /// run to reap; this is the orderly stop.
    struct ExitCleanedLauncher: RuntimeLauncher {
        let base: LocalRuntimeLauncher

        func launch(_ entry: CatalogEntry, kind: RuntimeKind) async throws -> any RunningModel {
            let running = try await base.launch(entry, kind: kind)
            guard let server = running as? LocalModelServer else { return running }
            return Registered(server: server, cleanup: ExitCleanup.register { server.stopBeforeExit() })
        }

        func memoryFit(_ entry: CatalogEntry, kind: RuntimeKind) -> MemoryFit? { base.memoryFit(entry, kind: kind) }

        func installation(of kind: RuntimeKind) async -> Result<String, RuntimeUnavailable>? {
            await base.installation(of: kind)
        }

        /// A server while it is registered for the exit.
        struct Registered: RunningModel {
            let server: LocalModelServer
            let cleanup: Int
            var endpoint: URL? { server.endpoint }
            var isRunning: Bool { server.isRunning }
            var residentBytes: Int64? { server.residentBytes }
            func lastLines() -> String { server.lastLines() }
            func stop() async {
                await server.stop()
                ExitCleanup.unregister(cleanup)
            }
        }
    }
#endif
