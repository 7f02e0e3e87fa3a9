#if os(Linux) || os(macOS)
    import Foundation
    import ModelDepot
    import ModelDepotCore

    /// The mirror's announcement, made once the server listens and withdrawn when `serve` ends (even when it ends
    /// while the announcement is still being made).
    final class AdvertisementHolder: @unchecked Sendable {
        // @unchecked: `advertisement` and `stopped` are read and written under `lock` only.
        private let lock = NSLock()
        private var advertisement: MirrorAdvertisement?
        private var stopped = false

        /// Announces the mirror and says on stderr under which name the daemon confirmed it, or why not.
        func start(name: String, port: UInt16, announcement: MirrorAnnouncement) async {
            do {
                // Registering talks to the daemon (over D-Bus with Avahi) and may block: off the cooperative pool.
                let made = try await BlockingWork.run {
                    try MirrorAdvertisement(name: name, port: port, announcement: announcement)
                }
                let keep = lock.withLock {
                    if !stopped { advertisement = made }
                    return !stopped
                }
                guard keep else { return made.stop() }
                let registered = try await made.confirmed()
                StandardStreams.error(
                    Data("announced as '\(registered)' (\(MirrorAnnouncement.serviceType)) on the local network\n".utf8)
                )
            } catch {
                StandardStreams.error(Data("warning: \(error.localizedDescription) Not announced.\n".utf8))
            }
        }

        func stop() {
            lock.withLock {
                stopped = true
                return advertisement
            }?.stop()
        }
    }
#endif
