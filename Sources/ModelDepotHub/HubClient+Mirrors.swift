import Foundation
import ModelDepotCore
import ModelDepotTransfer

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

    /// `call` on the first place that answers: a mirror that fails in any way (unreachable, 5xx, timed out,
    /// a 404 for what the endpoint may have, a malformed answer) hands over to the next; the endpoint's own
    /// answer is final. Cancellation stops at once.
    func failingOver<T>(_ call: (HubClient) async throws -> T) async throws -> T {
        guard !mirrors.isEmpty else { return try await call(self) }
        for mirror in endpointsInOrder.dropLast() {
            do {
                return try await call(mirror)
            } catch let error as ModelDepotError where error.code != .cancelled {
                continue
            }
        }
        return try await call(withoutMirrors)
    }
}
