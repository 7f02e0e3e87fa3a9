import Foundation
import ModelDepotCore
import ModelDepotTransfer
import Synchronization

extension HubClient {
    /// How a mirror is asked: once. A mirror that is down, failing or slow costs one attempt, not the
    /// endpoint's whole retry budget, before the next one is asked.
    static let mirrorRetryPolicy = RetryPolicy(maxAttempts: 1)

    /// The places to ask, in order: each mirror (with its own token, asked once), then the endpoint itself.
    package var endpointsInOrder: [HubClient] {
        mirrors.map { mirror in
            var client = HubClient(
                endpoint: mirror.endpoint, token: mirror.token, offline: isOffline, transport: transport, clock: clock,
                retryPolicy: Self.mirrorRetryPolicy, random: random)
            client.waitObserver = waitObserver
            client.waitListener = waitListener
            return client
        } + [withoutMirrors]
    }

    /// This client without its mirrors: the endpoint alone.
    package var withoutMirrors: HubClient {
        var client = self
        client.mirrors = []
        return client
    }

    /// This client with its content-only mirrors (found on the network) answering listings when the endpoint
    /// cannot be reached: for a pull that a lock holds every file to before anything is published, so what such a
    /// mirror lists can place nothing the lock does not name. The endpoint is still asked
    /// first, so a mirror cannot name an older commit for a branch the endpoint can answer for.
    ///
    /// The client's ``DiscoveredListings`` says afterwards whether a discovered mirror did answer, so that what it
    /// listed is not recorded as the commit's tree.
    package var answeringListingsFromDiscoveredMirrors: HubClient {
        var client = self
        client.discoveredListings = DiscoveredListings()
        return client
    }

    /// The endpoint could not be reached at all (no connection, or one that went silent), as opposed to an answer
    /// it gave (a 404, a 429, a 5xx, a certificate or a proxy that refused): only then may a discovered mirror list.
    static func isOutOfReach(_ error: ModelDepotError) -> Bool {
        error.code == .network || error.code == .stalled
    }

    /// This client without the hand-over of listings to discovered mirrors: for what no lock checks (a Xet CAS URL
    /// and its token).
    package var withoutDiscoveredListings: HubClient {
        var client = self
        client.discoveredListings = nil
        return client
    }

    /// The discovered mirrors that failed to serve a file, shared by the client's copies: not asked again.
    package final class DiscoveredFailures: Sendable {
        private let failed = Mutex<Set<URL>>([])
        package init() {}
        package func contains(_ endpoint: URL) -> Bool { failed.withLock { $0.contains(endpoint) } }
        package func insert(_ endpoint: URL) { _ = failed.withLock { $0.insert(endpoint) } }
    }

    /// Whether a discovered mirror answered a listing, metadata or info call of a client that lets them
    /// (``answeringListingsFromDiscoveredMirrors``); shared by the client's copies.
    package final class DiscoveredListings: Sendable {
        private let answered = Mutex(false)
        package init() {}
        package var happened: Bool { answered.withLock { $0 } }
        func record() { answered.withLock { $0 = true } }
    }

    /// `call` on the first place that answers: a named mirror that fails in any way (unreachable, 5xx, timed out,
    /// a 404 for what the endpoint may have, a malformed answer) hands over to the next; the endpoint's own
    /// answer is final. Cancellation stops at once. Content-only mirrors are never asked: what a listing, a file's
    /// metadata or a range of bytes says comes from a place the user named.
    func failingOver<T>(_ call: (HubClient) async throws -> T) async throws -> T {
        guard !mirrors.isEmpty else { return try await call(self) }
        let places = zip(mirrors, endpointsInOrder)
        for (mirror, place) in places where mirror.trust == .named {
            do {
                return try await call(place)
            } catch let error as ModelDepotError where error.code != .cancelled {
                continue
            }
        }
        let discovered = places.filter { $0.0.trust == .contentOnly }.map(\.1)
        guard !discovered.isEmpty else { return try await call(withoutMirrors) }
        // Without the hand-over, say what would have let a mirror found on the LAN stand in.
        guard let discoveredListings else {
            do {
                return try await call(withoutMirrors)
            } catch let error as ModelDepotError where Self.isOutOfReach(error) {
                throw error.withMessage(
                    "\(error.message) A mirror found on the local network stands in for the endpoint only in a pull a lock holds every file to (pull --locked)."
                )
            }
        }
        // Only an endpoint out of reach hands over: its "no such repository", "gated", rate limit, server error,
        // certificate or proxy refusal is final.
        do {
            return try await call(withoutMirrors)
        } catch let endpointError as ModelDepotError where Self.isOutOfReach(endpointError) {
            for place in discovered {
                do {
                    let answer = try await call(place)
                    discoveredListings.record()
                    return answer
                } catch let error as ModelDepotError where error.code != .cancelled {
                    continue
                }
            }
            throw endpointError
        }
    }
}
