import Foundation
import ModelDepotCore

extension DownloadRun {
    /// Sends a GET for `range` (nil: the whole file), following redirects itself so that the caller's
    /// headers reach the original origin only. Remembers where redirects led, so later ranges go straight there.
    /// `watched`: the caller runs this request under ``withStallWatchdog(_:)``.
    func send(range: Range<Int64>?, ifRange: String?, watched: Bool = false) async throws -> TransportResponse {
        let start = flow.withLock { $0.resolvedURL }
        let (response, url) = try await HTTPExchange.following(
            redirectsFrom: start, limit: configuration.maxRedirects,
            send: { url in
                var headers: [(name: String, value: String)] = [("Accept-Encoding", "identity")]
                if let range { headers.append(("Range", "bytes=\(range.lowerBound)-\(range.upperBound - 1)")) }
                if let ifRange { headers.append(("If-Range", ifRange)) }
                if url.hasSameOrigin(as: request.url) { headers.append(contentsOf: request.headers) }
                return try await transport.send(
                    TransportRequest(
                        url: url, headers: headers, callerDetectsStalls: watched && configuration.stallTimeout != nil))
            })
        if [400, 401, 403].contains(response.status), !url.hasSameOrigin(as: request.url) {
            // A redirect target refusing access: a signed CDN URL that expired (S3 answers 403 "Request has
            // expired"). The original URL hands out a fresh one; withRetries asks it.
            throw await expiredURL(response, at: url)
        }
        try HTTPExchange.refuseEncodedFile(response, from: url)
        if url != request.url { flow.withLock { $0.redirected(to: url) } }
        return response
    }

    /// The error for a redirect target that refused access, quoting the start of its answer.
    private func expiredURL(_ response: TransportResponse, at url: URL) async -> ModelDepotError {
        var quoted = ""
        if let bytes = try? await response.body.prefix(limit: 2048) {
            quoted = ServerAnswer.summary(of: bytes)
        }
        return ModelDepotError(
            .expiredURL,
            "\(url.host ?? "the server") (where \(URLRedaction.redacted(request.url)) redirected) refused access with HTTP \(response.status)\(quoted.isEmpty ? "" : ": \(quoted)")."
        )
    }

    /// Runs `operation`, retrying transient failures with backoff on the injected clock.
    ///
    /// An ``ModelDepotError/Code/expiredURL`` is not waited for: the next attempt starts again from the
    /// original URL, which redirects to a fresh signed one, and continues the same ranges. After
    /// ``DownloadConfiguration/maxURLRefreshes`` fresh URLs in a row without a byte of progress it fails.
    ///
    /// - Parameter progressMade: asked after a failure; when the failed attempt moved data forward the attempt
    ///   count starts again, so a long segment over a flaky link is not failed for earlier, recovered errors.
    func withRetries<T>(progressMade: () -> Bool, _ operation: () async throws -> T) async throws -> T {
        var refreshes = 0
        return try await configuration.retryPolicy.run(
            clock: clock, random: random, classify: Self.classify, progressMade: progressMade,
            recover: { failure, moved in
                if moved { refreshes = 0 }
                guard failure.code == .expiredURL else { return false }
                refreshes += 1
                guard refreshes <= configuration.maxURLRefreshes else {
                    throw ModelDepotError(
                        .expiredURL,
                        "\(failure.message) It still did after \(configuration.maxURLRefreshes) fresh URLs from \(URLRedaction.redacted(request.url)); check the credentials or try again later."
                    )
                }
                flow.withLock { $0.urlRefused() }
                logger.notice(
                    "asking the original URL for a fresh one",
                    metadata: [
                        "url": "\(URLRedaction.redacted(request.url))",
                        "error": "\(URLRedaction.redacted(in: failure.message))",
                    ])
                return true
            },
            willRetry: { failure, attempt, delay in
                flow.withLock { $0.requestFailed() }
                logger.info(
                    "retrying",
                    metadata: [
                        "url": "\(URLRedaction.redacted(request.url))", "attempt": "\(attempt)", "delay": "\(delay)",
                        "error": "\(URLRedaction.redacted(in: failure.message))",
                    ])
            },
            waiting: { self.emit(waiting: $0) },
            operation)
    }

    /// Runs `operation` and fails it with `stalled` when its counter does not move for the stall timeout.
    func withStallWatchdog<T: Sendable>(_ operation: @escaping @Sendable (ProgressCounter) async throws -> T)
        async throws -> T
    {
        let counter = ProgressCounter()
        guard let timeout = configuration.stallTimeout else { return try await operation(counter) }
        let clock = self.clock
        let host = request.url.host ?? "the server"
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask {
                // A request queued for a per-host permit has not reached the server: no stall while it waits.
                try await AdmissionWait.$observer.withValue(AdmissionWait.Observer { counter.setWaiting($0) }) {
                    try await operation(counter)
                }
            }
            group.addTask {
                var last = counter.current
                while true {
                    try await clock.sleep(for: timeout)
                    let now = counter.current
                    if now == last, !counter.isWaiting {
                        throw ModelDepotError(
                            .stalled, "No data arrived from \(host) for \(timeout); the connection was dropped.")
                    }
                    last = now
                }
            }
            defer { group.cancelAll() }
            while let result = try await group.next() {
                if let result { return result }
            }
            throw CancellationError()
        }
    }

    /// Turns any error into a ``ModelDepotError``: transport failures become `network`, cancellation `cancelled`.
    static func classify(_ error: any Error) -> ModelDepotError {
        if let error = error as? ModelDepotError { return error }
        if error is CancellationError { return .cancelled() }
        return ModelDepotError(.network, "The connection failed: \(error).", underlying: error)
    }
}

extension DownloadRun {
    /// The error for a status the download cannot use, saying which credentials went with the request.
    func statusError(_ response: TransportResponse) -> ModelDepotError {
        let authorization = request.headers.first { $0.name.caseInsensitiveCompare("Authorization") == .orderedSame }
        let sent: String
        switch authorization?.value.split(separator: " ").first?.lowercased() {
        case nil: sent = "no credentials were"
        case "bearer": sent = "a bearer token was"
        case "basic": sent = "a user name and password (HTTP Basic) were"
        default: sent = "an Authorization header was"
        }
        return HTTPStatusError.error(for: response, url: request.url, sentCredentials: sent)
    }
}

/// Maps an HTTP status that is not a success to a ``ModelDepotError``.
enum HTTPStatusError {
    /// - Parameter sentCredentials: what a 401 or 403 message says was sent: "a bearer token", "no credentials".
    package static func error(for response: TransportResponse, url: URL, sentCredentials: String? = nil)
        -> ModelDepotError
    {
        let status = response.status
        let retryAfter = response.retryAfter
        switch HTTPExchange.code(for: status) {
        case .unauthorized:
            let sent = sentCredentials.map { " \($0.prefix(1).uppercased() + $0.dropFirst()) sent." } ?? ""
            return ModelDepotError(
                .unauthorized,
                "\(url) refused access (HTTP \(status)).\(sent) Check that the URL is right and pass a valid token or credentials."
            )
        case .notFound:
            return ModelDepotError(.notFound, "\(url) does not exist on the server (HTTP \(status)). Check the URL.")
        case .network:
            return ModelDepotError(.network, "\(url) timed out on the server (HTTP \(status)).")
        case .rateLimited:
            return ModelDepotError(
                .rateLimited,
                "\(url) is rate limited (HTTP 429)\(retryAfter.map { "; the server asks to wait \($0)" } ?? "").",
                retryAfter: retryAfter)
        case .serverError:
            return ModelDepotError(
                .serverError, "\(url) failed on the server (HTTP \(status)).", retryAfter: retryAfter)
        default:
            return ModelDepotError(
                .httpStatus, "\(url) answered HTTP \(status), which the download cannot use. Check the URL.")
        }
    }
}
