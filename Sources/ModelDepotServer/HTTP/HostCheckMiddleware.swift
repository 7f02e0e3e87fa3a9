import Hummingbird

/// Refuses (421) a request whose `Host` is not one of the mirror's own names, when the mirror has no token: a page
/// that rebinds its DNS name to the mirror's address still sends its own name (``AllowedHosts``). Registered after
/// `/healthz` (open to load balancers by any name) and before everything else, the dashboard included: it shows
/// who pulled what, and a rebinding page must not read it.
struct HostCheckMiddleware: RouterMiddleware {
    typealias Context = MirrorRequestContext

    let allowedHosts: AllowedHosts

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        try check(request)
        return try await next(request, context)
    }

    /// Throws the 421 refusal unless the request's `Host` is one of the mirror's names.
    func check(_ request: Request) throws {
        guard allowedHosts.allows(request.head.authority) else {
            throw AllowedHosts.refusal(request.head.authority ?? "")
        }
    }
}
