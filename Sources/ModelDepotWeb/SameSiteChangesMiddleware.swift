import HTTPTypes
import Hummingbird

/// Refuses a change (any method but GET, HEAD, OPTIONS) that does not come from the dashboard's own page: fetch
/// metadata of another site or an `Origin` that names another host (403), or a body that is not JSON (415; a
/// cross-site form cannot send JSON). The answer closes the connection rather than read the body.
struct SameSiteChangesMiddleware<Context: RequestContext>: RouterMiddleware {
    /// `https` when the page is served over TLS.
    let scheme: String

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        if RequestGuard.isMutating(request.method.rawValue) {
            let refusal =
                RequestGuard.crossSite(
                    host: request.head.authority ?? "", origin: request.headers[.origin],
                    fetchSite: request.headers[HTTPField.Name("Sec-Fetch-Site")!], scheme: scheme)
                ?? (RequestGuard.isJSON(request.headers[.contentType]) ? nil : .notJSON)
            if let refusal { return refusal.response(path: request.uri.path, pages: nil) }
        }
        return try await next(request, context)
    }
}
