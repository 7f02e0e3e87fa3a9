#if MODELDEPOT_SERVER_STACK
    import AsyncHTTPClient
    import Foundation
    import ModelDepotCore
    import NIOCore
    import NIOHTTP1
    import NIOPosix
    import NIOSSL
    import Synchronization

    /// ``HTTPTransport`` on async-http-client: HTTP/1.1 only (parallel ranges need separate TCP connections;
    /// HTTP/2 would multiplex them onto one), no redirect following (the engine does it), no decompression,
    /// and a read timeout so a server that stops sending cannot hang a connection forever — except for requests
    /// whose caller watches for stalls itself (``TransportRequest/callerDetectsStalls``): async-http-client
    /// re-arms its idle timer on every read of the socket, which cost ~4 % of a loopback download's CPU, so
    /// those go through a second client without one.
    package final class AsyncHTTPTransport: HTTPTransport {
        /// Connection settings.
        package struct Configuration: Sendable {
            /// The longest wait for a connection to open.
            package var connectTimeout: Duration = .seconds(15)
            /// The socket-level idle limit: how long an API call waits for the server's answer, or for the next
            /// bytes of it. Downloads are watched by the engine's clock-driven stall timeout instead.
            package var readTimeout: Duration = .seconds(20)
            /// The most connections open to one host at once.
            package var maximumConnectionsPerHost: Int = 16
            /// The defaults: 15 s to connect, 16 connections per host.
            package init() {}
        }

        /// The clients of one proxy choice: async-http-client takes its proxy per client, so a request to the Hub
        /// and one to its CDN that `no_proxy` treats differently go through different clients.
        private struct Clients {
            let client: HTTPClient
            /// The same settings without the idle-read timer, for requests whose caller detects stalls.
            let unwatched: HTTPClient
        }

        /// Which clients a request goes through: its proxy, and whether it speaks TLS (only those need the added
        /// certificate authorities, and plain and TLS connections are never shared anyway).
        private struct ClientKey: Hashable {
            let proxy: ProxyServer?
            let secure: Bool
        }

        private let base: HTTPClient.Configuration
        private let group: HTTPClient.EventLoopGroupProvider
        private let network: NetworkSettings
        /// Why the settings could not be used (a proxy variable this client cannot follow): every request fails
        /// with it, rather than going around the proxy.
        private let refusal: ModelDepotError?
        /// The TLS settings with the added certificate authorities, read on the first `https` request: parsing a
        /// system-sized bundle (which `SSL_CERT_FILE` and friends often name, several times over) costs tens of
        /// milliseconds that a plain-HTTP pull, or a command that sends nothing, should not pay.
        private let secureSettings = Mutex<SecureState>(.none)
        private let clients = Mutex<[ClientKey: Clients]>([:])

        /// A transport for the life of the process, used when none is given: its proxies and extra certificate
        /// authorities come from the environment (``NetworkSettings/fromEnvironment(_:)``).
        package static let shared = fromEnvironment()

        /// A transport with `configuration` through the environment's proxies and with its certificate
        /// authorities; when a variable cannot be followed, every request fails with the reason, never going
        /// around the proxy.
        package static func fromEnvironment(configuration: Configuration = Configuration()) -> AsyncHTTPTransport {
            do {
                return AsyncHTTPTransport(configuration: configuration, network: try NetworkSettings.fromEnvironment())
            } catch let error as ModelDepotError {
                return AsyncHTTPTransport(refusing: error)
            } catch {
                return AsyncHTTPTransport(refusing: ModelDepotError(.invalidArgument, "\(error)"))
            }
        }

        /// The process-wide transport for `network`: one per distinct settings, so their connections are shared.
        package static func shared(for network: NetworkSettings) -> AsyncHTTPTransport {
            registry.withLock { transports in
                if let transport = transports[network] { return transport }
                let transport = AsyncHTTPTransport(network: network)
                transports[network] = transport
                return transport
            }
        }

        private static let registry = Mutex<[NetworkSettings: AsyncHTTPTransport]>([:])

        /// A transport with its own connection pools, direct or through `network`'s proxies, trusting `network`'s
        /// certificate authorities besides the system's. Certificates that cannot be read make every `https`
        /// request fail with an error naming the file and its setting.
        package init(configuration: Configuration = Configuration(), network: NetworkSettings = .direct) {
            self.network = network
            refusal = nil
            base = Self.clientConfiguration(configuration)
            #if canImport(Darwin)
                // On Apple platforms async-http-client runs on Network.framework by default, whose TLS reads only
                // `trustRoots`: added authorities (NIOSSL's `additionalTrustRoots`) would be ignored there. A
                // transport that adds some runs on SwiftNIO's sockets and BoringSSL instead, as on Linux.
                group =
                    network.trust.additional.isEmpty ? .singleton : .shared(MultiThreadedEventLoopGroup.singleton)
            #else
                group = .singleton
            #endif
        }

        private init(refusing error: ModelDepotError) {
            network = .direct
            refusal = error
            base = Self.clientConfiguration(Configuration())
            group = .singleton
        }

        /// The TLS configuration for `https` requests: nil when `network` changes nothing (the system's store,
        /// verified). Made once it has succeeded, off the cooperative pool (it reads and parses files), by one
        /// task that every request arriving meanwhile waits for; a failure (a file not there yet, a bundle being
        /// rewritten) is tried again by the next request.
        private func secureConfiguration() async throws -> TLSConfiguration? {
            let trust = network.trust
            if trust.additional.isEmpty && !trust.insecure { return nil }
            let (settled, making) = secureSettings.withLock {
                state -> (TLSConfiguration??, Task<TLSConfiguration?, any Error>?) in
                switch state {
                case .made(let settled):
                    return (.some(settled), nil)
                case .making(let task):
                    return (nil, task)
                case .none:
                    let task = Task { try await BlockingWork.run { try Self.makeSecureConfiguration(trust) } }
                    state = .making(task)
                    return (nil, task)
                }
            }
            if let settled { return settled }
            guard let making else { return nil }
            do {
                let made = try await making.value
                secureSettings.withLock { $0 = .made(made) }
                return made
            } catch {
                secureSettings.withLock { state in
                    // Only this attempt: a newer one may have started since.
                    if case .making(let current) = state, current == making { state = .none }
                }
                throw error
            }
        }

        private static func makeSecureConfiguration(_ trust: TrustSettings) throws -> TLSConfiguration? {
            do {
                let added = try TrustedCertificateFiles.certificates(trust)
                guard !added.isEmpty || trust.insecure else { return nil }
                var tls = TLSConfiguration.makeClientConfiguration()
                // Added to the system's store (NIOSSL reads it from the platform's usual places), not instead of it.
                tls.additionalTrustRoots = [.certificates(added)]
                if trust.insecure { tls.certificateVerification = .none }
                return tls
            } catch {
                throw error as? ModelDepotError ?? ModelDepotError(.invalidArgument, "\(error)", underlying: error)
            }
        }

        /// Where ``secureConfiguration()`` stands.
        private enum SecureState {
            case none
            case making(Task<TLSConfiguration?, any Error>)
            case made(TLSConfiguration?)
        }

        private static func clientConfiguration(_ configuration: Configuration) -> HTTPClient.Configuration {
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
            return config
        }

        /// The clients for requests through `proxy` (nil: direct) to a plain or a TLS origin, made on first use.
        private func clients(for proxy: ProxyServer?, secure: Bool) async throws -> Clients {
            let tls = secure ? try await secureConfiguration() : nil
            let key = ClientKey(proxy: proxy, secure: secure)
            return clients.withLock { made in
                if let existing = made[key] { return existing }
                var config = base
                config.proxy = proxy.map(Self.proxy)
                if let tls { config.tlsConfiguration = tls }
                let client = HTTPClient(eventLoopGroupProvider: group, configuration: config)
                config.timeout.read = nil
                let pair = Clients(
                    client: client, unwatched: HTTPClient(eventLoopGroupProvider: group, configuration: config))
                made[key] = pair
                return pair
            }
        }

        private static func proxy(_ server: ProxyServer) -> HTTPClient.Configuration.Proxy {
            switch server.kind {
            case .socks5:
                return .socksServer(host: server.host, port: server.port)
            case .http:
                let authorization = server.username.map {
                    HTTPClient.Authorization.basic(username: $0, password: server.password ?? "")
                }
                return .server(host: server.host, port: server.port, authorization: authorization)
            }
        }

        /// Closes the connections. Call it once done with a transport you created (not with ``shared``).
        package func shutdown() async throws {
            for pair in clients.withLock({ made in
                defer { made = [:] }; return Array(made.values)
            }) {
                try await pair.client.shutdown()
                try await pair.unwatched.shutdown()
            }
        }

        deinit {
            // A transport dropped without `shutdown()` closes its clients in the background (each keeps itself alive
            // until it has): async-http-client traps when a client that is still up is deinitialized.
            for pair in clients.withLock({ Array($0.values) }) {
                _ = pair.client.shutdown()
                _ = pair.unwatched.shutdown()
            }
        }

        package func proxy(for url: URL) -> String? { network.proxies.proxy(for: url)?.description }

        /// Memory the unread bytes of one response may hold before its connection stops reading the socket: eight
        /// of the event loop's largest reads, so that it reads while the engine writes and hashes. A 1 GiB loopback
        /// pull over one connection took 2.6–2.75 s with async-http-client's one-element body (``StreamedResponse``),
        /// 1.9–2.0 s with 512 KiB and about the same with 1 MiB, whose sixteen connections behind a bandwidth cap
        /// would hold 16 MiB.
        static let bodyBufferLimit = 512 << 10

        /// Sends `request` and returns once the status and headers are in; the body streams after.
        package func send(_ request: TransportRequest) async throws -> TransportResponse {
            try await sendStreamed(request).response
        }

        /// ``send(_:)``, with the delegate that carries the answer (tests hold it weakly to see it go once the
        /// request is over).
        func sendStreamed(_ request: TransportRequest) async throws -> (
            response: TransportResponse, delegate: StreamedResponse
        ) {
            if let refusal { throw refusal }
            let url = request.url
            let proxy = network.proxies.proxy(for: url)
            var headers = HTTPHeaders()
            for header in request.headers { headers.add(name: header.name, value: header.value) }
            do {
                let outgoing = try HTTPClient.Request(
                    url: url, method: HTTPMethod(rawValue: request.method), headers: headers,
                    body: request.body.map { .byteBuffer(ByteBuffer(bytes: $0)) })
                let secure = url.scheme?.lowercased() != "http"
                let pair = try await clients(for: proxy, secure: secure)
                let client = request.callerDetectsStalls ? pair.unwatched : pair.client
                let delegate = StreamedResponse(
                    limit: Self.bodyBufferLimit,
                    mappingErrors: { TransportFailure.error(from: $0, url: url) })
                let response = try await delegate.response {
                    // The event loop only says where the delegate's calls run: the pool hands over an idle
                    // connection on any loop (a warm pool's usually differs, and each read then hops threads), and
                    // opens a new one on this loop. No deadline: the delegate API's would end the body too (the
                    // async API's ends at the head), and a single-stream download of a large file may last a day;
                    // the connect timeout, the idle-read timeout and the engine's stall watchdog bound the waits.
                    client.execute(
                        request: outgoing, delegate: delegate, eventLoop: .delegate(on: client.eventLoopGroup.next()),
                        deadline: nil)
                }
                return (response, delegate)
            } catch {
                let failure = TransportFailure.error(from: error, url: url, proxy: proxy)
                // A refused certificate is named by its issuer (a company's inspecting proxy says who it is).
                if let refused = failure as? ModelDepotError, refused.code == .untrustedCertificate,
                    let host = url.host,
                    let issuer = await PresentedCertificate.issuer(host: host, port: url.port ?? 443, proxy: proxy)
                {
                    throw refused.withMessage(
                        refused.message.replacingOccurrences(
                            of: " presented is not signed", with: " presented (issued by \(issuer)) is not signed"))
                }
                throw failure
            }
        }
    }
#endif
