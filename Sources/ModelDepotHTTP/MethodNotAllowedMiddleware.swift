import HTTPTypes
import Hummingbird

/// Turns the router's 404 for a path that exists, asked with a method it does not take, into ``MethodNotAllowed``
/// (405 with `Allow`, as RFC 9110 asks; Hummingbird's router answers 404). Added to a router after its routes, so
/// that it runs only where no route answered, with the routes as the router lists them (`Router.routes`), the
/// one table of what is answered.
public struct MethodNotAllowedMiddleware<Context: RequestContext>: RouterMiddleware {
    let routes: [(path: [RouterPath.Element], methods: [HTTPRequest.Method])]

    public init(routes: [Router<Context>.RouteDescription]) {
        var methods: [String: (path: [RouterPath.Element], methods: [HTTPRequest.Method])] = [:]
        for route in routes {
            methods[route.path.description, default: (route.path.components, [])].methods.append(route.method)
        }
        self.routes = Array(methods.values)
    }

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            let allowed = allowedMethods(request.uri.path)
            guard !allowed.isEmpty, !allowed.contains(request.method) else { throw error }
            throw MethodNotAllowed(method: request.method, allowed: allowed)
        }
    }

    /// The methods of the routes whose path matches `path`, in a stable order (GET, HEAD, POST, PUT, …).
    func allowedMethods(_ path: String) -> [HTTPRequest.Method] {
        let segments = path.split(separator: "/")
        var allowed: Set<HTTPRequest.Method> = []
        for route in routes where Self.matches(route.path, segments) { allowed.formUnion(route.methods) }
        let order: [HTTPRequest.Method] = [.get, .head, .post, .put, .patch, .delete, .options]
        return order.filter(allowed.contains)
            + allowed.filter { !order.contains($0) }.sorted { $0.rawValue < $1.rawValue }
    }

    static func matches(_ pattern: [RouterPath.Element], _ segments: [Substring]) -> Bool {
        for (index, element) in pattern.enumerated() {
            if element.description == "**" { return index < segments.count }
            guard index < segments.count, element ~= segments[index] else { return false }
        }
        return pattern.count == segments.count
    }
}
