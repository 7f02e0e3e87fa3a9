import Hummingbird
import Logging
import ModelDepotCore
import ModelDepotHTTP

/// How every error the mirror's routes throw is answered, in the Hub's format (status, `X-Error-Code`,
/// `X-Error-Message`, `{"error": …}`): ``HubServerError``s as they are, `ModelDepotError`s with the status
/// `ModelDepotHTTP` gives them, a method a path does not take as 405 with `Allow`, a path no route has as the
/// Hub's 404, and anything else as a 500 that says nothing of the server's insides (the log has it).
struct HubErrors: Sendable {
    let logger: Logger

    /// The middleware that answers with ``answer(_:to:)``.
    var middleware: ErrorAnswering<MirrorRequestContext> {
        ErrorAnswering { error, request in answer(error, to: request).response }
    }

    func answer(_ error: any Error, to request: Request) -> HubServerError {
        switch error {
        case let error as HubServerError: return error
        case let error as ModelDepotError: return HubServerError(error)
        case let error as MethodNotAllowed:
            return HubServerError.methodNotAllowed(error.method.rawValue, allowed: error.allowed.map(\.rawValue))
        case let error as BodyTooLarge:
            return HubServerError(
                status: 413, code: nil,
                message: "A request to this mirror may carry at most \(error.limit) bytes of body.", commit: nil)
        case let error as HTTPError where error.status == .notFound:
            return HubServerError.notAHubPath(request.uri.path)
        case let error as HTTPError:
            // Hummingbird's own refusals (a malformed request) keep their status.
            return HubServerError(
                status: Int(error.status.code), code: nil, message: error.body ?? error.status.reasonPhrase,
                commit: nil)
        default:
            logger.error(
                "\(request.method) \(request.uri.path) failed", metadata: ["error": "\(String(reflecting: error))"])
            return HubServerError(
                status: 500, code: nil, message: "The mirror failed to answer this request; its log says why.",
                commit: nil)
        }
    }
}
