import Hummingbird

/// A web app answered by the mirror under a path prefix (`/ui` for `serve --ui`), on the mirror's own port. The
/// app does its own access checks: the mirror's token check does not apply under the prefix, because a browser
/// cannot send `Authorization` headers on page loads (the dashboard takes the token once and keeps a cookie).
public struct MountedApp: Sendable {
    /// `/ui`: the app answers this path, `/ui/`, and everything under `/ui/api/` and `/ui/assets/`. Other paths
    /// under it stay the Hub's: a repository of an owner named `ui` still resolves (except `ui/api` and
    /// `ui/assets`).
    public var prefix: String
    public var respond: @Sendable (Request) async throws -> Response
    /// Called once when the mirror starts to drain: the app ends what would keep a connection open (its event
    /// streams), so the drain does not wait for them.
    public var onDrain: @Sendable () -> Void

    public init(
        prefix: String, respond: @escaping @Sendable (Request) async throws -> Response,
        onDrain: @escaping @Sendable () -> Void = {}
    ) {
        self.prefix = prefix
        self.respond = respond
        self.onDrain = onDrain
    }

    func answers(_ path: String) -> Bool {
        path == prefix || path == prefix + "/" || path.hasPrefix(prefix + "/api/")
            || path.hasPrefix(prefix + "/assets/")
    }
}
