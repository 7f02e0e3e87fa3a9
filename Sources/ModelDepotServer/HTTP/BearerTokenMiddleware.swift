import Hummingbird

/// Requires `Authorization: Bearer <token>` on the Hub's routes of a mirror started with a token (the dashboard
/// under `/ui` checks access itself: a browser cannot send the header on page loads).
struct BearerTokenMiddleware: RouterMiddleware {
    typealias Context = MirrorRequestContext

    let token: String

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        try check(request)
        return try await next(request, context)
    }

    /// Throws the 401 refusal unless the request carries the token.
    func check(_ request: Request) throws {
        guard Self.authorized(request, token: token) else {
            throw request.headers[.authorization] == nil
                ? HubServerError(
                    status: 401, code: nil,
                    message: "Authentication required: this mirror needs a token (HF_TOKEN).", commit: nil)
                : HubServerError.unauthorized
        }
    }

    /// Constant-time comparison of the bearer token, so timing does not leak how much of a guess was right.
    static func authorized(_ request: Request, token: String) -> Bool {
        guard let header = request.headers[.authorization], header.hasPrefix("Bearer ") else { return false }
        return equal(String(header.dropFirst(7)), token)
    }

    /// Whether `given` is `token`, compared in constant time.
    static func equal(_ given: String, _ token: String) -> Bool {
        let given = Array(given.utf8)
        let expected = Array(token.utf8)
        var difference = given.count ^ expected.count
        for index in 0..<max(given.count, expected.count) {
            difference |= Int((index < given.count ? given[index] : 0) ^ (index < expected.count ? expected[index] : 0))
        }
        return difference == 0
    }
}
