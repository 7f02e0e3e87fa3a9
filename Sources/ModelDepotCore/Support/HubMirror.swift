import Foundation

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
