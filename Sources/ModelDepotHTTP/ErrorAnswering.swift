import Hummingbird

/// The middleware where every error a server's routes throw becomes its answer: each server gives the one function
/// that decides the answer (the mirror in the Hub's format, the web app in its own), with the status of a
/// `ModelDepotError` from ``ModelDepotError/httpStatus``.
public struct ErrorAnswering<Context: RequestContext>: RouterMiddleware {
    let answer: @Sendable (any Error, Request) -> Response

    public init(answer: @escaping @Sendable (any Error, Request) -> Response) {
        self.answer = answer
    }

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        do {
            return try await next(request, context)
        } catch {
            return answer(error, request)
        }
    }
}
