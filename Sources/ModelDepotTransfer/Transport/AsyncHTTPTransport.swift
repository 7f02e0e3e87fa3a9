#if canImport(AsyncHTTPClient)
    import AsyncHTTPClient
    import Foundation
    import NIOCore
    import NIOHTTP1

    /// ``HTTPTransport`` on async-http-client: HTTP/1.1 only (parallel ranges need separate TCP connections;
    /// HTTP/2 would multiplex them onto one), no redirect following (the engine does it), no decompression,
    /// and a read timeout so a server that stops sending cannot hang a connection forever — except for requests
    /// whose caller watches for stalls itself (``TransportRequest/callerDetectsStalls``): async-http-client
    /// re-arms its idle timer on every read of the socket, which cost ~4 % of a loopback download's CPU, so
    /// those go through a second client without one.
    public final class AsyncHTTPTransport: HTTPTransport {
        /// Connection settings.
        public struct Configuration: Sendable {
            /// The longest wait for a connection to open.
            public var connectTimeout: Duration = .seconds(15)
            /// The socket-level idle limit: how long an API call waits for the server's answer, or for the next
            /// bytes of it. Downloads are watched by the engine's clock-driven stall timeout instead.
            public var readTimeout: Duration = .seconds(20)
            /// The most connections open to one host at once.
            public var maximumConnectionsPerHost: Int = 16
            /// The defaults: 15 s to connect, 16 connections per host.
            public init() {}
        }

        private let client: HTTPClient
        /// The same settings without the idle-read timer, for requests whose caller detects stalls.
        private let unwatchedClient: HTTPClient

        /// A transport for the life of the process, used when none is given.
        public static let shared = AsyncHTTPTransport()

        /// A transport with its own connection pool.
        public init(configuration: Configuration = Configuration()) {
            var config = HTTPClient.Configuration(
                redirectConfiguration: .disallow,
                timeout: .init(
                    connect: .nanoseconds(configuration.connectTimeout.nanoseconds),
                    read: .nanoseconds(configuration.readTimeout.nanoseconds)
                ),
                connectionPool: .init(
                    idleTimeout: .seconds(60),
                    concurrentHTTP1ConnectionsPerHostSoftLimit: configuration.maximumConnectionsPerHost
                ),
                decompression: .disabled
            )
            config.httpVersion = .http1Only
            // The engine retries with its own (clock-driven, observable) backoff; AHC's silent reconnect loop
            // would hide a refused connection for the whole connect timeout.
            config.connectionPool.retryConnectionEstablishment = false
            // On Apple platforms AHC runs on Network.framework, which by default sits in `.waiting` until the
            // connect timeout when nothing listens: a refused mirror would hand over only after it. Waiting for a
            // network is the engine's NetworkPolicy's job, visibly; here a refusal fails at once. (No effect on Linux.)
            config.networkFrameworkWaitForConnectivity = false
            client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: config)
            config.timeout.read = nil
            unwatchedClient = HTTPClient(eventLoopGroupProvider: .singleton, configuration: config)
        }

        /// Closes the connections. Call it once done with a transport you created (not with ``shared``).
        public func shutdown() async throws {
            try await client.shutdown()
            try await unwatchedClient.shutdown()
        }

        /// Sends `request` and returns once the status and headers are in; the body streams after.
        public func send(_ request: TransportRequest) async throws -> TransportResponse {
            var outgoing = HTTPClientRequest(url: request.url.absoluteString)
            outgoing.method = HTTPMethod(rawValue: request.method)
            for header in request.headers { outgoing.headers.add(name: header.name, value: header.value) }
            if let body = request.body { outgoing.body = .bytes(ByteBuffer(bytes: body)) }
            let response: HTTPClientResponse
            do {
                response = try await (request.callerDetectsStalls ? unwatchedClient : client)
                    .execute(outgoing, timeout: .hours(24))
            } catch {
                throw TransportFailure.error(from: error, url: request.url)
            }
            let headers = response.headers.map { (name: $0.name, value: $0.value) }
            let url = request.url
            return TransportResponse(
                status: Int(response.status.code), headers: headers,
                body: TransportBody(
                    buffers: response.body, mappingErrors: { TransportFailure.error(from: $0, url: url) }))
        }
    }
#endif
