import Hummingbird
import Logging

/// The web app's outermost middleware: one log line per request, refusals included.
struct UIAccessLog: RouterMiddleware {
    typealias Context = WebRequestContext

    let logger: Logger

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        let response = try await next(request, context)
        logger.info("\(request.method) \(request.uri.path) \(response.status.code)")
        return response
    }
}
