import HTTPTypes
import Hummingbird

/// Adds the headers every answer of the web app and the mirror's dashboard carries: no inline script, no framing,
/// no referrer, no sniffing, no caching (an answer that sets one of them itself keeps its own).
struct SecurityHeadersMiddleware<Context: RequestContext>: RouterMiddleware {
    static var headers: HTTPFields {
        [
            HTTPField.Name("Content-Security-Policy")!:
                "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
            HTTPField.Name("X-Content-Type-Options")!: "nosniff",
            HTTPField.Name("Referrer-Policy")!: "no-referrer",
            HTTPField.Name("X-Frame-Options")!: "DENY",
            .cacheControl: "no-store",
        ]
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        var response = try await next(request, context)
        for field in Self.headers where response.headers[field.name] == nil { response.headers.append(field) }
        return response
    }
}
