import Foundation
import ModelDepotCore
import ModelDepotPlatform

/// A mirror announced on the local network with DNS-SD (`_hf-mirror._tcp`, TXT as `MirrorAnnouncement` lays it
/// out), so clients that look (`--discover`, `MODELDEPOT_DISCOVER=1`, ``MirrorDiscovery``) find it. The
/// announcement lasts until ``stop()`` or the end of the process; the daemon withdraws it then.
package final class MirrorAdvertisement: Sendable {
    private let registration: DNSServiceRegistration
    /// The name asked for.
    package let name: String

    /// Announces the mirror listening on `port` as `name`.
    ///
    /// - Throws: `network` when this machine has no DNS-SD (the message says what to install) or its daemon
    ///   refuses.
    package init(name: String, port: UInt16, announcement: MirrorAnnouncement) throws {
        guard let library = DNSServiceLibrary.shared else {
            throw ModelDepotError(
                .network, "Cannot announce the mirror on the local network: \(DNSServiceLibrary.installAdvice).")
        }
        do {
            registration = try DNSServiceRegistration(
                library: library, name: name, type: MirrorAnnouncement.serviceType, port: port,
                text: announcement.text.bytes)
        } catch let error as DNSServiceError {
            throw ModelDepotError(.network, "Cannot announce the mirror on the local network: \(error).")
        }
        self.name = name
    }

    /// The name the daemon settled on (another mirror with the same name makes it "NAME (2)"), once it said.
    package var registeredName: String? { registration.registeredName }

    /// The name the daemon registered, once it says so within `wait`.
    ///
    /// - Throws: `network` with the daemon's refusal, or when it said nothing within `wait`.
    package func confirmed(within wait: Duration = .seconds(5)) async throws -> String {
        let deadline = ContinuousClock.now.advanced(by: wait)
        while ContinuousClock.now < deadline {
            if let failure = registration.failure {
                throw ModelDepotError(
                    .network, "The local network's DNS-SD daemon refused the announcement: \(failure).")
            }
            if let name = registration.registeredName { return name }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw ModelDepotError(
            .network, "The local network's DNS-SD daemon did not confirm the announcement within \(wait).")
    }

    /// Withdraws the announcement. Idempotent.
    package func stop() { registration.stop() }

    /// The name a mirror announces by default: "modeldepot on HOST", the machine's name without its domain, cut
    /// to the 63 bytes a DNS label holds.
    package static var defaultName: String {
        let host = ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? "localhost"
        var name = "modeldepot on \(host)"
        while name.utf8.count > 63 { name.removeLast() }
        return name
    }
}
