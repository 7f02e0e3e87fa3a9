import Foundation
import ModelDepotCore

/// The facts of HTTP every client here shares — the engine, the Hub client and the inference provider: which
/// answers are redirects and where they lead, what a status means as an error code, and which failures a
/// retry can heal. Each client keeps its own policy (which redirects to follow, which headers go along, what
/// its messages say); what the protocol says lives here once.
package enum HTTPExchange {
    package static let redirectStatuses: Set<Int> = [301, 302, 303, 307, 308]

    /// Where a redirect answer leads: the `Location` resolved against `url`. Nil when `response` is not a
    /// redirect. A redirect without a usable `Location`, or to anything but `http`/`https` (`file://`,
    /// `ftp://`), is a `protocolViolation`.
    package static func redirectTarget(of response: TransportResponse, from url: URL) throws -> URL? {
        guard redirectStatuses.contains(response.status) else { return nil }
        guard let location = response.header("Location"),
            let next = URL(string: location, relativeTo: url)?.absoluteURL,
            ["http", "https"].contains(next.scheme?.lowercased() ?? "")
        else {
            throw ModelDepotError(
                .protocolViolation,
                "\(URLRedaction.redacted(url)) redirected (HTTP \(response.status)) to an invalid location '\(response.header("Location") ?? "")'."
            )
        }
        return next
    }

    /// Sends a request to `url` and follows its redirects: the one redirect loop of every client here. Each
    /// hop is sent with `send` (which decides the headers for that URL); `follows` decides whether a redirect
    /// from one URL to the next is followed (the Hub client keeps its token on the endpoint's origin and reads
    /// a cross-origin redirect itself). Returns the first answer not followed and the URL it came from.
    ///
    /// - Throws: `protocolViolation` for a redirect to an invalid location, or after `limit` redirects.
    package static func following(
        redirectsFrom url: URL, limit: Int, send: (URL) async throws -> TransportResponse,
        follows: (_ from: URL, _ to: URL) -> Bool = { _, _ in true }
    ) async throws -> (response: TransportResponse, url: URL) {
        var current = url
        for _ in 0...limit {
            let response = try await send(current)
            guard let next = try redirectTarget(of: response, from: current), follows(current, next) else {
                return (response, current)
            }
            current = next
        }
        throw ModelDepotError(
            .protocolViolation,
            "\(URLRedaction.redacted(url)) redirected more than \(limit) times; the server is misconfigured.")
    }

    /// The error code an HTTP status stands for, before any service-specific reading (the Hub's
    /// `X-Error-Code`): 401/403 `unauthorized`, 404/410 `notFound`, 408 `network`, 429 `rateLimited`, 5xx
    /// `serverError` — except 501 (Not Implemented) and 505 (HTTP Version Not Supported), which no retry
    /// changes — and `httpStatus` for the rest.
    package static func code(for status: Int) -> ModelDepotError.Code {
        switch status {
        case 401, 403: .unauthorized
        case 404, 410: .notFound
        case 408: .network
        case 429: .rateLimited
        case 500...599 where status != 501 && status != 505: .serverError
        default: .httpStatus
        }
    }
}

extension ModelDepotError.Code {
    /// Failures that may heal by themselves, so the clients retry them (with backoff): the network, a stall,
    /// a server error, a rate limit. Everything else fails at once.
    package static let transient: Set<ModelDepotError.Code> = [.network, .stalled, .serverError, .rateLimited]
}
