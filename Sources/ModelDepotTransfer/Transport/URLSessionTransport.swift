import Foundation
import ModelDepotCore
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// ``HTTPTransport`` on Foundation's `URLSession`, the transport Apple platforms run downloads on (no socket stack
/// of our own in an app). Each request is a data task whose delegate streams the body: no redirect is followed
/// (the 3xx answer comes back to the engine), no body is decoded (`Accept-Encoding: identity` is sent and the bytes
/// arrive as the server sent them), and no cache or cookie store is involved.
///
/// Backpressure: on Apple platforms a task whose unread bytes pass ``Configuration/bufferLimit`` is suspended
/// (`URLSessionTask.suspend()`, which stops reading the socket) until the reader catches up. swift-corelibs-foundation
/// (Linux) cannot pause a data task without restarting it, so there a slow reader's memory is bounded only by what
/// the engine asks for per request (one range). The tests here assert bytes, digests and errors on both; memory under
/// a slow reader is an Apple-only claim.
package final class URLSessionTransport: HTTPTransport, Sendable {
    /// Session settings.
    package struct Configuration: Sendable {
        /// How long an API call waits for the server's answer, or for the next bytes of it (the request's
        /// `timeoutInterval`). Requests whose caller detects stalls wait as long as the caller lets them.
        package var readTimeout: Duration = .seconds(20)
        /// The most connections open to one host at once (`httpMaximumConnectionsPerHost`).
        package var maximumConnectionsPerHost: Int = 16
        /// Unread bytes past which a task is suspended until its reader catches up.
        package var bufferLimit: Int = 4 << 20
        /// Which networks the session may use (Apple platforms: `allowsExpensiveNetworkAccess`,
        /// `allowsConstrainedNetworkAccess`); the engine's own checks apply everywhere.
        package var networkPolicy = NetworkPolicy()
        /// The defaults.
        package init() {}
    }

    private let session: URLSession
    private let router: TaskRouter
    private let configuration: Configuration

    /// Content codings URLSession undoes on its own (`gzip`, `deflate`, `br`); a response in one of them arrives
    /// decoded and is reported without its `Content-Encoding` (and encoded `Content-Length`).
    static let decodedBySession: Set<String> = ["gzip", "x-gzip", "deflate", "br"]

    /// Whether a task with too many unread bytes is suspended. Apple's URLSession stops reading the socket while
    /// a data task is suspended. swift-corelibs-foundation's restarts the transfer when a suspended data task is
    /// resumed, which would splice the body's start into its middle: there the engine's range size is the bound.
    static var suspendsForBackpressure: Bool {
        #if canImport(Darwin)
            true
        #else
            false
        #endif
    }

    /// A transport for the life of the process. On Apple platforms it follows the system's proxy settings, or the
    /// proxy variables when they are set (``ProxySettings/connectionProxyDictionary``).
    package static let shared = URLSessionTransport()

    private static let byPolicy = Mutex<[NetworkPolicy: URLSessionTransport]>([:])

    /// A transport for the life of the process whose session carries `policy` (``shared`` for the default one).
    package static func shared(for policy: NetworkPolicy) -> URLSessionTransport {
        if policy == Configuration().networkPolicy { return shared }
        return byPolicy.withLock { made in
            if let transport = made[policy] { return transport }
            var configuration = Configuration()
            configuration.networkPolicy = policy
            let transport = URLSessionTransport(configuration: configuration)
            made[policy] = transport
            return transport
        }
    }

    /// The network policy its session carries.
    package var networkPolicy: NetworkPolicy { configuration.networkPolicy }

    /// A transport with its own session (and connection pool).
    package init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        var proxyCredentials: URLCredential?
        let settings = URLSessionConfiguration.ephemeral
        settings.httpMaximumConnectionsPerHost = configuration.maximumConnectionsPerHost
        settings.requestCachePolicy = .reloadIgnoringLocalCacheData
        settings.urlCache = nil
        settings.httpCookieStorage = nil
        settings.httpShouldSetCookies = false
        settings.timeoutIntervalForResource = 7 * 24 * 3600
        #if canImport(Darwin)
            // URLSessionConfiguration.waitsForConnectivity: a refused or unreachable server fails at once; waiting
            // for a network is the engine's NetworkPolicy's job, visibly.
            settings.waitsForConnectivity = false
            // URLSessionConfiguration.allowsExpensiveNetworkAccess / allowsConstrainedNetworkAccess: part 1's rules
            // (cellular and hotspots; Low Data Mode), enforced by the system as well.
            settings.allowsExpensiveNetworkAccess = configuration.networkPolicy.allowsExpensive
            settings.allowsConstrainedNetworkAccess = configuration.networkPolicy.allowsConstrained
            // URLSessionConfiguration.connectionProxyDictionary: the proxy variables when set (https_proxy…, as
            // read everywhere else); unset, nil keeps the system's settings. (On Linux, Foundation's URLSession runs
            // on libcurl, which reads the same variables itself.)
            let proxies = try? ProxySettings.fromEnvironment()
            settings.connectionProxyDictionary = proxies?.connectionProxyDictionary
            proxyCredentials = (proxies?.https ?? proxies?.all).flatMap { server in
                server.username.map {
                    URLCredential(user: $0, password: server.password ?? "", persistence: .forSession)
                }
            }
        #endif
        router = TaskRouter(bufferLimit: configuration.bufferLimit, proxyCredentials: proxyCredentials)
        // The delegate queue runs callbacks one at a time, in order per task.
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        session = URLSession(configuration: settings, delegate: router, delegateQueue: queue)
    }

    /// Ends the session once its tasks finish. Call it once done with a transport you created (not ``shared``).
    package func invalidate() {
        session.finishTasksAndInvalidate()
    }

    /// The most unread bytes any response of this transport has held at once (for tests of the buffer bound).
    package var largestBuffer: Int { router.locked.largestBuffer.withLock { $0 } }

    package func send(_ request: TransportRequest) async throws -> TransportResponse {
        var outgoing = URLRequest(url: request.url)
        outgoing.httpMethod = request.method
        outgoing.cachePolicy = .reloadIgnoringLocalCacheData
        outgoing.timeoutInterval = request.callerDetectsStalls ? 24 * 3600 : configuration.readTimeout.timeInterval
        for header in request.headers { outgoing.addValue(header.value, forHTTPHeaderField: header.name) }
        if outgoing.value(forHTTPHeaderField: "Accept-Encoding") == nil {
            outgoing.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        }
        if let body = request.body { outgoing.httpBody = Data(body) }
        let task = session.dataTask(with: outgoing)
        let stream = router.register(task, url: request.url)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                stream.awaitResponse(continuation)
                task.resume()
            }
        } onCancel: {
            task.cancel()
        }
    }
}

/// The session's delegate: hands each task's callbacks to its ``TaskStream``.
/// What the router guards with locks, in a class of its own: a `Mutex` stored in an `NSObject` subclass crashes
/// Swift 6.3.1's optimizer on Linux ("Found ownership error" in the class's deinit), so the release build failed.
private final class TaskRouterState: Sendable {
    let streams = Mutex<[Int: TaskStream]>([:])
    let largestBuffer = Mutex(0)
}

private final class TaskRouter: NSObject, URLSessionDataDelegate, Sendable {
    let bufferLimit: Int
    let locked = TaskRouterState()

    /// Given to a proxy that asks (407) for them: the proxy URL's user and password.
    let proxyCredentials: URLCredential?

    init(bufferLimit: Int, proxyCredentials: URLCredential?) {
        self.bufferLimit = bufferLimit
        self.proxyCredentials = proxyCredentials
    }

    #if canImport(Darwin)
        /// URLSessionTaskDelegate's challenge: a proxy asking for credentials gets the proxy URL's, once
        /// (`URLProtectionSpace.isProxy()`); every other challenge is the system's to decide.
        func urlSession(
            _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
            completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
        ) {
            if challenge.protectionSpace.isProxy(), let proxyCredentials, challenge.previousFailureCount == 0 {
                completionHandler(.useCredential, proxyCredentials)
            } else {
                completionHandler(.performDefaultHandling, nil)
            }
        }
    #endif

    func register(_ task: URLSessionDataTask, url: URL) -> TaskStream {
        let stream = TaskStream(task: task, url: url, router: self)
        locked.streams.withLock { $0[task.taskIdentifier] = stream }
        return stream
    }

    func stream(_ task: URLSessionTask) -> TaskStream? {
        locked.streams.withLock { $0[task.taskIdentifier] }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        // The engine decides where to go next (and which headers may cross origins): the 3xx comes back to it.
        completionHandler(nil)
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        stream(dataTask)?.received(response)
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        stream(dataTask)?.received(data)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let stream = locked.streams.withLock { $0.removeValue(forKey: task.taskIdentifier) }
        stream?.completed(error)
    }
}

/// One task's response: its head for `send`, then its body (``BackpressuredBody``) for a reader to drain.
private final class TaskStream: Sendable {
    private struct State {
        var responseWaiter: CheckedContinuation<TransportResponse, any Error>?
        var responded = false
    }

    private let state = Mutex(State())
    let body: BackpressuredBody
    let url: URL
    unowned let router: TaskRouter

    init(task: URLSessionDataTask, url: URL, router: TaskRouter) {
        self.body = BackpressuredBody(
            task: task, limit: router.bufferLimit, pauses: URLSessionTransport.suspendsForBackpressure)
        self.url = url
        self.router = router
    }

    func awaitResponse(_ continuation: CheckedContinuation<TransportResponse, any Error>) {
        state.withLock { $0.responseWaiter = continuation }
    }

    func received(_ response: URLResponse) {
        guard let http = response as? HTTPURLResponse else { return }
        var headers = http.allHeaderFields.compactMap { key, value -> (name: String, value: String)? in
            guard let name = key as? String else { return nil }
            return (name: name, value: "\(value)")
        }
        // URLSession decodes these encodings itself whatever the request asked (Apple's and Linux's alike) yet
        // keeps the header: the body arrives decoded, so say so, or the engine would decode it a second time.
        let encoding = headers.first { $0.name.caseInsensitiveCompare("Content-Encoding") == .orderedSame }?.value
        if let encoding, URLSessionTransport.decodedBySession.contains(encoding.lowercased()) {
            headers.removeAll {
                ["content-encoding", "content-length"].contains($0.name.lowercased())
            }
        }
        let handle = BodyHandle(stream: self)
        let answer = TransportResponse(
            status: http.statusCode, headers: headers,
            body: TransportBody(makeNext: { { try await handle.next() } }))
        let waiter = state.withLock { state -> CheckedContinuation<TransportResponse, any Error>? in
            state.responded = true
            defer { state.responseWaiter = nil }
            return state.responseWaiter
        }
        waiter?.resume(returning: answer)
    }

    func received(_ data: Data) {
        let buffered = body.received(BodyChunk(data))
        router.locked.largestBuffer.withLock { $0 = max($0, buffered) }
    }

    func completed(_ error: (any Error)?) {
        let failure = error.map { URLSessionFailure.error(from: $0, url: url) }
        let waiter = state.withLock { state in
            defer { state.responseWaiter = nil }
            return state.responded ? nil : state.responseWaiter
        }
        if let waiter {
            waiter.resume(throwing: failure ?? ModelDepotError(.protocolViolation, "\(url) sent no HTTP answer."))
        }
        body.completed(failure)
    }

    /// The next buffer, waiting for one; nil at the end of the body.
    func next() async throws -> BodyChunk? { try await body.next() }

    /// The reader is gone: a body left unread stops downloading.
    func abandon() { body.abandon() }
}

/// Lives as long as the response's body can still be read; dropping it unread cancels the task, as dropping an
/// async-http-client body closes its connection.
private final class BodyHandle: Sendable {
    let stream: TaskStream
    init(stream: TaskStream) { self.stream = stream }
    func next() async throws -> BodyChunk? { try await stream.next() }
    deinit { stream.abandon() }
}

// URLSessionTask.suspend(), resume() and cancel() are safe from any thread (Apple's documentation of NSURLSessionTask).
extension URLSessionDataTask: PausableTask {}

/// What URLSession reports, as errors a person can act on (the same wording as the async-http-client transport's).
enum URLSessionFailure {
    static func error(from error: any Error, url: URL) -> any Error {
        if error is ModelDepotError || error is CancellationError { return error }
        let server = TransportFailure.serverName(url)
        guard let urlError = error as? URLError else {
            return ModelDepotError(.network, "The connection to \(server) failed: \(error).", underlying: error)
        }
        switch urlError.code {
        case .cancelled:
            return CancellationError()
        case .cannotConnectToHost:
            return ModelDepotError(
                .network, "Nothing answers at \(server) (connection refused); is the server running?",
                underlying: error)
        case .networkConnectionLost:
            return ModelDepotError(
                .network, "The server at \(server) closed the connection in the middle of its answer.",
                underlying: error)
        case .timedOut:
            return ModelDepotError(
                .network, "The server at \(server) stopped sending (read timeout).", underlying: error)
        case .cannotFindHost, .dnsLookupFailed:
            return ModelDepotError(
                .network, "Cannot resolve the host name \(url.host ?? ""); check the URL and the network.",
                underlying: error)
        case .notConnectedToInternet:
            return ModelDepotError(.network, "This device is offline; \(server) cannot be reached.", underlying: error)
        case .badURL, .unsupportedURL:
            return ModelDepotError(.invalidURL, "Cannot request \(URLRedaction.redacted(url)): \(urlError.code).")
        case .badServerResponse, .cannotParseResponse:
            return ModelDepotError(
                .protocolViolation,
                "The server at \(server) did not answer with HTTP. Check the URL's scheme and port; retrying will not help.",
                underlying: error)
        default:
            return ModelDepotError(
                .network, "The connection to \(server) failed: \(urlError.localizedDescription).", underlying: error)
        }
    }

    /// Whether `error` is URLSession's report of a refused connection.
    static func isRefusedConnection(_ error: any Error) -> Bool {
        (error as? URLError)?.code == .cannotConnectToHost
    }
}
