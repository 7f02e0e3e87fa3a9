import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import ModelDepot
import ModelDepotHTTP
import ModelDepotInference
import ModelDepotScreens
import ServiceLifecycle

/// ModelDepot's web app: the screens as pages in a browser, for a person's own machine (`modeldepot ui`).
///
/// ```swift
/// let app = WebApp(downloads: downloads)
/// try await app.run(host: "127.0.0.1", port: 0) { url in print("open \(url)") }
/// ```
/// The URL handed to `onListening` carries the session's one-time token; see ``UISession``.
public struct WebApp: Sendable {
    public let downloads: ModelDownloads
    public let session: UISession
    /// Whether the Hub cannot be asked; pages say so.
    public var offline: Bool
    /// Where the Hub client's token came from (the Settings screen names it, never the token).
    public var tokenOrigin: HubEnvironment.TokenOrigin
    /// The Chat playground's endpoint (`--chat-endpoint`), offered besides the models loaded here.
    public var chat: ChatPlayground?
    /// The Embeddings playground's endpoint.
    public var embeddings: EmbeddingsPlayground?
    /// The Transcribe screen's endpoint.
    public var transcribe: TranscribePlayground?
    /// The model each playground selects when its page names none (`--chat-local NAME`).
    public var preferred: [PlaygroundKind: String] = [:]
    public var logger: Logger
    /// The live-update and chat streams: they end when their clients leave (found by a heartbeat) or the app
    /// stops.
    public var streams = EventStreams()
    /// How long a stop (SIGTERM, SIGINT, or the running task's cancellation) waits for responses in flight before
    /// it closes their connections and cancels what is left. Event streams are told to end at once.
    public var drainTimeout: Duration = .seconds(10)
    /// Called when a stop has not ended 1.5 s after ``drainTimeout`` even with every connection closed and every
    /// task cancelled; the command line exits there. Nil: keep waiting.
    public var onStuckStop: (@Sendable () -> Void)?
    /// The runtimes the app loads downloaded models into (the "Loaded models" panel, Load and Unload); nil: none.
    /// They are all stopped when the app stops.
    public var runtimes: ModelRuntimes?
    /// The certificate and key when the app speaks https (`ui --tls-cert FILE --tls-key FILE`), HTTP/2 offered by
    /// ALPN; read again on SIGHUP. Nil: plain http.
    public var tls: ServerTLS?

    public init(
        downloads: ModelDownloads, session: UISession = UISession(), offline: Bool = false,
        tokenOrigin: HubEnvironment.TokenOrigin = .none, logger: Logger = Logger(label: "modeldepot.ui")
    ) {
        self.downloads = downloads
        self.session = session
        self.offline = offline
        self.tokenOrigin = tokenOrigin
        self.logger = logger
    }

    /// Serves until the task is cancelled or the process gets SIGINT/SIGTERM; either way it drains: the listening
    /// socket closes, every event stream sends `event: shutdown` and ends, responses in flight get up to
    /// ``drainTimeout`` to finish, and then it returns.
    ///
    /// - Parameter onListening: called once with the launch URL (`/session?token=…` on the bound port).
    public func run(
        host: String = "127.0.0.1", port: Int = 0, onListening: @escaping @Sendable (URL) async -> Void = { _ in }
    ) async throws {
        let responder = makeRouter(host: host, pages: try await UIPages.load()).buildResponder()
        let connections = ConnectionDrain()
        let app = Application(
            responder: responder,
            server: tls.map { .tls($0, idleTimeout: nil, drain: connections) } ?? .http1(drain: connections),
            configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: "modeldepot"),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? port
                let shown = host.contains(":") ? "[\(host)]" : host
                await onListening(
                    URL(
                        string:
                            "\(tls == nil ? "http" : "https")://\(shown):\(port)/session?token=\(session.launchToken)")!
                )
            },
            logger: logger)
        var helpers =
            tls.map {
                [ServiceGroupConfiguration.ServiceConfiguration(service: CertificateReloader(tls: $0, logger: logger))]
            } ?? []
        if let runtimes {
            helpers.append(
                .init(
                    service: IdleUnloader(runtimes: runtimes, logger: logger),
                    successTerminationBehavior: .ignore))
        }
        try await DrainingServer.run(
            helpers + [
                .init(service: app),
                .init(
                    service: StreamCloser(streams: streams, downloads: downloads, runtimes: runtimes, logger: logger),
                    successTerminationBehavior: .ignore),
            ], drainTimeout: drainTimeout, connections: connections, logger: logger, onStuck: onStuckStop)
    }
}

extension WebApp {
    /// The models the playgrounds choose among: the endpoints, and the catalog's models through ``runtimes``.
    var playgrounds: PlaygroundModels {
        var models = PlaygroundModels(downloads: downloads, runtimes: runtimes)
        models.chatEndpoint = chat
        models.embeddingsEndpoint = embeddings
        models.transcribeEndpoint = transcribe
        models.preferred = preferred
        return models
    }

    /// The app's router. Middleware applies to the routes registered after it, and all of it to paths no route has;
    /// outermost first: the access log, the security headers, errors to answers, then the guard (host, session,
    /// cross-site), which refuses from the headers alone before any body is read.
    func makeRouter(host: String, pages: UIPages) -> Router<WebRequestContext> {
        let router = Router(context: WebRequestContext.self)
        router.add(middleware: UIAccessLog(logger: logger))
        router.add(middleware: SecurityHeadersMiddleware<WebRequestContext>())
        router.add(middleware: UIErrors(pages: pages, logger: logger).middleware() as ErrorAnswering<WebRequestContext>)
        router.add(
            middleware: UIGuardMiddleware(
                guardian: RequestGuard(host: host, scheme: tls == nil ? "http" : "https"), session: session,
                pages: pages))
        UIEndpoints(
            downloads: downloads, session: session, pages: pages, logger: logger, offline: offline,
            tokenOrigin: tokenOrigin, playgrounds: playgrounds, streams: streams, servedOverTLS: tls != nil,
            runtimes: runtimes
        ).addRoutes(to: router)
        router.add(middleware: MethodNotAllowedMiddleware(routes: router.routes))
        return router
    }
}

/// Ends every event stream as soon as the app starts to stop (it is shut down before the server, which then
/// drains what is left), stops the downloads the app started so their bytes and resume records are on disk for the
/// next `ui` (which offers to resume them), stops the runtimes of loaded models, and says so in the log.
struct StreamCloser: Service {
    let streams: EventStreams
    let downloads: ModelDownloads
    var runtimes: ModelRuntimes? = nil
    let logger: Logger

    func run() async throws {
        try? await gracefulShutdown()
        logger.notice(
            "stopping: event streams told to end, downloads stopped where they are; finishing the responses in flight, then exiting",
            metadata: ["streams": "\(streams.openCount)"])
        streams.closeAll()
        await downloads.stopAll()
        await runtimes?.unloadAll()
    }
}
