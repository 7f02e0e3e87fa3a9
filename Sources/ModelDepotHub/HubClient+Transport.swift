import Foundation
import ModelDepotCore
import ModelDepotTransfer

// One request to the Hub: the identity encoding, the token for the endpoint only, retries, bounded bodies.
extension HubClient {
    /// Sends one request with the identity encoding and, for the endpoint's origin, the token (never when not
    /// `authorizing`: a Xet CAS on the endpoint's host gets its own token, not the Hub's).
    func send(method: String, url: URL, extraHeaders: [(String, String)] = [], authorizing: Bool = true) async throws
        -> TransportResponse
    {
        guard !isOffline else {
            throw ModelDepotError(
                .notCached,
                "Offline mode is on (HF_HUB_OFFLINE), so \(url.path) cannot be asked for. Turn it off or pull the model while online.",
                remedy: .goOnline)
        }
        let headers =
            [("Accept-Encoding", "identity"), ("User-Agent", "modeldepot/0.1")] + extraHeaders
            + (authorizing ? authorization(for: url) : [])
        do {
            if try await pacer.pace(waiting: { wait in tellWaiting(wait) }) { waitObserver?(nil) }
            let response = try await transport.send(TransportRequest(method: method, url: url, headers: headers))
            pacer.observe(response.rateLimit)
            return response
        } catch let error as ModelDepotError {
            throw error
        } catch is CancellationError {
            throw ModelDepotError.cancelled()
        } catch {
            throw ModelDepotError(
                .network, "Cannot reach \(endpoint.absoluteString): \(error). Check the network and the endpoint.",
                underlying: error)
        }
    }

    /// A GET whose body is read whole, following same-origin redirects, retried on transient failures.
    func getWithRetries(_ url: URL) async throws -> ([UInt8], TransportResponse) {
        try await withRetries {
            // Same-origin redirects only (a renamed repository): the token must not leave the endpoint.
            let (response, current) = try await HTTPExchange.following(
                redirectsFrom: url, limit: Self.maximumRedirects, send: { try await send(method: "GET", url: $0) },
                follows: { $1.hasSameOrigin(as: $0) })
            let body = try HTTPExchange.decodedBody(
                try await Self.collect(response.body, limit: Self.maximumResponseBytes, url: current),
                contentEncoding: response.header("Content-Encoding"), from: current)
            guard (200..<300).contains(response.status) else {
                throw Self.hubError(for: response, url: current, body: body)
            }
            return (body, response)
        }
    }

    func withRetries<T>(_ operation: () async throws -> T) async throws -> T {
        try await retryPolicy.run(
            clock: EngineClock(clock), random: random,
            recover: { failure, _ in
                if givesUpWhenRefused && TransportFailure.isRefusedConnection(failure) { throw failure }
                return false
            }, waiting: { wait in wait.map(tellWaiting) ?? waitObserver?(nil) }, operation)
    }

    /// Tells the observer and the listener of a wait.
    func tellWaiting(_ wait: TransferWait) {
        waitObserver?(wait)
        waitListener?(wait)
    }

    /// The body, whole. A read stopped because the caller's task was cancelled (a download paused while it was
    /// listing files) stays a cancellation: called a network failure, it would be retried and shown as a failed
    /// download instead of a paused one.
    static func collect(_ body: TransportBody, limit: Int, url: URL) async throws -> [UInt8] {
        do {
            return try await body.collect(limit: limit, from: url)
        } catch let error as ModelDepotError {
            throw error
        } catch let error as CancellationError {
            throw error
        } catch {
            if Task.isCancelled { throw CancellationError() }
            throw ModelDepotError(.network, "The answer from \(url) was cut off: \(error).", underlying: error)
        }
    }

    func decode<T: Decodable>(_ type: T.Type, from body: [UInt8], what: String) throws -> T {
        try JSONAnswer.decode(
            type, from: body, sender: endpoint.absoluteString, what: what, hint: "Check that the endpoint is a Hub.")
    }

    /// The most pages of one file listing followed (the Hub pages by 1,000 entries: ten million files).
    static let maximumTreePages = 10_000

    /// Whether `url` has the scheme (http or https), host and port of `page`.
    static func isSameOrigin(_ url: URL, as page: URL) -> Bool {
        let scheme = url.scheme?.lowercased()
        guard scheme == "http" || scheme == "https", scheme == page.scheme?.lowercased(),
            let host = url.host?.lowercased(), host == page.host?.lowercased()
        else { return false }
        let defaultPort = scheme == "https" ? 443 : 80
        return (url.port ?? defaultPort) == (page.port ?? defaultPort)
    }

    /// The `rel="next"` target of a `Link` header.
    static func nextLink(in header: String, relativeTo base: URL) -> URL? {
        for part in header.split(separator: ",") {
            let pieces = part.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let target = pieces.first, target.hasPrefix("<"), target.hasSuffix(">"),
                pieces.dropFirst().contains(where: { $0.replacingOccurrences(of: " ", with: "") == #"rel="next""# })
            else { continue }
            return URL(string: String(target.dropFirst().dropLast()), relativeTo: base)?.absoluteURL
        }
        return nil
    }
}
