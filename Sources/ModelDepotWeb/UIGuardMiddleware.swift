import HTTPTypes
import Hummingbird

/// The web app's first check, from the headers alone (``RequestGuard``): host, session, cross-site, JSON. A refused
/// request is answered without its body being read, and the connection is closed rather than left with the body
/// still arriving.
struct UIGuardMiddleware: RouterMiddleware {
    typealias Context = WebRequestContext

    let guardian: RequestGuard
    let session: UISession
    let pages: UIPages

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        let port = context.localPort
        let refusal = guardian.check(
            method: request.method.rawValue, path: request.uri.path, host: request.head.authority, port: port,
            origin: request.headers[.origin], fetchSite: request.headers[HTTPField.Name("Sec-Fetch-Site")!],
            contentType: request.headers[.contentType],
            sessionOpen: session.admits(cookieHeader: request.headers[.cookie], port: port))
        if let refusal { return refusal.response(path: request.uri.path, pages: pages) }
        return try await next(request, context)
    }
}
