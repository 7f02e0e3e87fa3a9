import Foundation
import ModelDepotCore
import ModelDepotTransfer

/// A mirror of the Hub that a client asks before the Hub itself (`--mirror`, `MODELDEPOT_MIRRORS`): a
/// `modeldepot serve --upstream` in the building, a colleague's cache, a CDN in front of either.
public struct HubMirror: Sendable, Hashable {
    /// The mirror's base URL.
    public var endpoint: URL
    /// The token the mirror wants, if any. The Hub's token is never sent to a mirror.
    public var token: String?

    /// A mirror at `endpoint`, sent `token` (and only that) when given.
    public init(endpoint: URL, token: String? = nil) {
        self.endpoint = endpoint
        self.token = token
    }

    /// A mirror from its URL as a user typed it.
    ///
    /// - Throws: `invalidURL` when `text` is not an http(s) URL with a host.
    public init(parsing text: String, token: String? = nil) throws {
        var base = text
        while base.hasSuffix("/") { base.removeLast() }
        guard let url = URL(string: base), ["http", "https"].contains(url.scheme?.lowercased() ?? ""),
            url.host?.isEmpty == false
        else {
            throw ModelDepotError(
                .invalidURL, "The mirror '\(text)' is not a URL; give one like http://mirror.lan:8080.")
        }
        self.init(endpoint: url, token: token)
    }
}

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
