import Foundation
import ModelDepotCore
import ModelDepotHub
import ModelDepotPlatform

/// A mirror that answered a DNS-SD browse for `_hf-mirror._tcp` on the local network (`modeldepot serve
/// --advertise` announces one).
public struct DiscoveredMirror: Sendable, Hashable {
    /// The name it announced itself by ("modeldepot on rack-3").
    public var name: String
    /// Its base URL: the address its host name resolved to, the port and the path it announced.
    public var endpoint: URL
    /// Whether it said it wants a token. Such a mirror is not used: a discovered mirror is never sent a token.
    public var tokenRequired: Bool

    /// The mirror as a pull uses it: content only, no token (`HubMirror.Trust.contentOnly`).
    public var hubMirror: HubMirror { HubMirror(endpoint: endpoint, token: nil, trust: .contentOnly) }
}

/// Finds mirrors on the local network with DNS-SD: Bonjour on Apple platforms, Avahi's compatibility library on
/// Linux (loaded when used; see `DNSServiceLibrary`).
///
/// On iOS, iPadOS, tvOS and visionOS, browsing the local network needs the app's `Info.plist` to list the service
/// (`NSBonjourServices` with `_hf-mirror._tcp`) and say why (`NSLocalNetworkUsageDescription`); the system asks the
/// person once.
public enum MirrorDiscovery {
    /// How long a browse waits for a first answer before the pull goes to the endpoint alone.
    public static let defaultWait: Duration = .seconds(2)
    /// Whether this machine has DNS-SD (loading it the first time: call it before starting threads, since loading
    /// Avahi's library sets an environment variable).
    public static var isAvailable: Bool { DNSServiceLibrary.shared != nil }

    /// The most discovered mirrors a configuration uses (``ModelManager/Configuration/discoverMirrors(within:)``).
    public static let mostUsed = 3

    /// The mirrors that answer within `wait`, in name order; the browse ends 300 ms after the first one resolved.
    /// Announcements that are not well formed, or name an address no LAN host has, are left out.
    ///
    /// - Throws: `network` when this machine has no DNS-SD (the message says what to install) or its daemon does
    ///   not answer.
    public static func find(within wait: Duration = defaultWait) async throws -> [DiscoveredMirror] {
        guard let library = DNSServiceLibrary.shared else {
            throw ModelDepotError(
                .network, "Cannot look for mirrors on the local network: \(DNSServiceLibrary.installAdvice).")
        }
        // poll(2) on the daemon's socket blocks: on a thread of its own, never the cooperative pool.
        let instances = try await BlockingWork.run {
            do {
                return try DNSServiceBrowser.find(MirrorAnnouncement.serviceType, library: library, within: wait)
            } catch let error as DNSServiceError {
                throw ModelDepotError(.network, "Cannot look for mirrors on the local network: \(error).")
            }
        }
        return instances.compactMap(mirror(from:))
    }

    /// `name` without control characters: it is printed to terminals, and anyone on the link chose it.
    static func printable(_ name: String) -> String {
        String(
            String.UnicodeScalarView(name.unicodeScalars.map { $0.properties.generalCategory == .control ? "?" : $0 }))
    }

    /// The mirror an instance announces, if its TXT record and address hold up.
    static func mirror(from instance: DNSServiceInstance) -> DiscoveredMirror? {
        guard let announcement = MirrorAnnouncement(parsing: DNSTextRecord(parsing: instance.text)) else { return nil }
        for address in instance.addresses {
            if let endpoint = announcement.endpoint(address: address, port: instance.port) {
                return DiscoveredMirror(
                    name: printable(instance.name), endpoint: endpoint, tokenRequired: announcement.tokenRequired)
            }
        }
        return nil
    }
}

extension ModelManager.Configuration {
    /// Looks for mirrors on the local network (``MirrorDiscovery``) and adds the first three (by name) that want no
    /// token to ``discoveredMirrors``, after the named ones; returns every mirror that answered (a caller shows
    /// them).
    ///
    /// - Throws: what ``MirrorDiscovery/find(within:)`` throws; the configuration is unchanged then, and a pull
    ///   goes to the endpoint alone.
    @discardableResult
    public mutating func discoverMirrors(within wait: Duration = MirrorDiscovery.defaultWait) async throws
        -> [DiscoveredMirror]
    {
        let found = try await MirrorDiscovery.find(within: wait)
        // A few: each one a pull asks costs it time when it fails, and anyone on the link can announce many. One the
        // user named already is asked as named.
        let named = Set(((try? environment.mirrors()) ?? []).map(\.endpoint))
        discoveredMirrors += found.filter { !$0.tokenRequired && !named.contains($0.endpoint) }
            .prefix(MirrorDiscovery.mostUsed).map(\.hubMirror)
        return found
    }
}

extension SnapshotDownloader {
    /// This pull with its discovered mirrors answering listings when the endpoint cannot be reached: for a pull held
    /// to a lock before anything is published, where what such a mirror lists can place nothing the lock does not
    /// name.
    var answeringListingsFromDiscoveredMirrors: SnapshotDownloader {
        var pull = self
        pull.hub = hub.answeringListingsFromDiscoveredMirrors
        return pull
    }
}
