import Foundation

/// A mirror of the Hub that a client asks before the Hub itself (`--mirror`, `MODELDEPOT_MIRRORS`): a
/// `modeldepot serve --upstream` in the building, a colleague's cache, a CDN in front of either.
public struct HubMirror: Sendable, Hashable {
    /// The mirror's base URL.
    public var endpoint: URL
    /// The token the mirror wants, if any. The Hub's token is never sent to a mirror.
    public var token: String?
    /// How far the mirror is believed.
    public var trust: Trust

    /// How far a mirror is believed: what it may answer.
    public enum Trust: Sendable, Hashable {
        /// A mirror the user named: it answers as the endpoint would, listings included (Python's `HF_ENDPOINT`
        /// trusts its server the same way). Every file is still checked against the listing's digest.
        case named
        /// A mirror found on the network (DNS-SD), which anyone on the link can announce: it serves file content
        /// only, each file checked against the digest and size in the endpoint's own listing, so it can waste time
        /// but never place a wrong byte. It answers listings only when the endpoint cannot be reached, and only in a pull that a
        /// lock holds every file to (commit, path, size, digest) before anything is published: how a client cut
        /// off from the endpoint still uses it. A signature does not do: it names files, not the commit they are
        /// published under.
        case contentOnly
    }

    /// A mirror at `endpoint`, sent `token` (and only that) when given.
    public init(endpoint: URL, token: String? = nil, trust: Trust = .named) {
        self.endpoint = endpoint
        self.token = token
        self.trust = trust
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
