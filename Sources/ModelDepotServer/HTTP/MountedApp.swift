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

    public init(prefix: String, respond: @escaping @Sendable (Request) async throws -> Response) {
        self.prefix = prefix
        self.respond = respond
    }

    func answers(_ path: String) -> Bool {
        path == prefix || path == prefix + "/" || path.hasPrefix(prefix + "/api/")
            || path.hasPrefix(prefix + "/assets/")
    }
}
