import Hummingbird
import Logging
import ModelDepotCore
import ModelDepotHTTP

/// How every error the web app's routes (and the dashboard's) throw is answered: JSON `{"error": …}` for
/// the API, a page for a page. A `ModelDepotError` gets the status `ModelDepotHTTP` gives it (a page that names
/// nothing that exists is a 404 page), a method a path does not take 405 with `Allow`, a body over its route's limit
/// 413 with the connection closed, a path no route has 404, and anything else a 500 that says nothing of the
/// server's insides (the log has it).
struct UIErrors: Sendable {
    let pages: UIPages
    let logger: Logger

    /// The middleware that answers with ``answer(_:to:)``.
    func middleware<Context: RequestContext>() -> ErrorAnswering<Context> {
        ErrorAnswering { error, request in answer(error, to: request) }
    }

    func answer(_ error: any Error, to request: Request) -> Response {
        let api = UIResponses.isAPI(request.uri.path)
        switch error {
        case let error as ModelDepotError:
            let status = Int(error.httpStatus.code)
            if api { return UIResponses.error(status, error.message, code: error.code.rawValue) }
            return UIResponses.html(
                status == 400 ? 404 : status, pages.notice("Cannot show this", error.message))
        case let error as MethodNotAllowed:
            var response = UIResponses.error(
                405, "\(error.method) is not allowed here; use \(error.allowHeader).")
            response.headers[.allow] = error.allowHeader
            return response
        case let error as BodyTooLarge:
            var response = UIResponses.error(
                413, "A request here may carry at most \(ByteFormat.string(Int64(error.limit))).")
            response.headers[.connection] = "close"
            return response
        case let error as HTTPError where error.status == .notFound:
            return api
                ? UIResponses.error(404, "No such API route: \(request.uri.path.prefix(200)).")
                : UIResponses.html(
                    404, pages.notice("Not found", "There is no page here. The Models page lists every model."))
        case let error as HTTPError:
            // Hummingbird's own refusals (a malformed request) keep their status.
            return UIResponses.error(Int(error.status.code), error.body ?? error.status.reasonPhrase)
        default:
            logger.error(
                "\(request.method) \(request.uri.path) failed", metadata: ["error": "\(String(reflecting: error))"])
            return UIResponses.error(500, "This request failed inside the server; its log says why.")
        }
    }
}
