import HTTPTypes
import ModelDepotCore

extension ModelDepotError {
    /// The status an HTTP server answers this error with, the one place both servers (the mirror, the web app)
    /// decide it: from the error's category, and for a few codes the status that says more (a full disk is 507, a
    /// held lock 409, a rate limit 503 with `Retry-After`).
    public var httpStatus: HTTPResponse.Status {
        switch code {
        case .unauthorized: return .unauthorized
        case .gatedRepository: return .forbidden
        case .insufficientDiskSpace: return HTTPResponse.Status(code: 507, reasonPhrase: "Insufficient Storage")
        case .locked, .incompleteSnapshot: return .conflict
        case .rateLimited: return .serviceUnavailable
        case .invalidModelFile: return .unprocessableContent
        default: break
        }
        switch category {
        case .input: return .badRequest
        case .notFound: return .notFound
        case .authorization: return .forbidden
        // Bytes from elsewhere that were not what they had to be, or a server that failed us: a gateway's trouble.
        case .network, .integrity: return .badGateway
        case .storage: return .internalServerError
        // Stopped on purpose, or an app's own refusal (a download that is not running): a conflict with the state.
        case .cancelled, .other: return .conflict
        }
    }
}
