import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import ModelDepot
import ModelDepotScreens
import ServiceLifecycle
import Synchronization

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
    /// The Chat playground's model; nil: the page says how to give one.
    public var chat: ChatPlayground?
    /// The Embeddings playground's encoder; nil: the page says how to give one.
    public var embeddings: EmbeddingsPlayground?
    /// The Transcribe screen's transcriber; nil: the page says how to give one.
    public var transcribe: TranscribePlayground?
    public var logger: Logger
    /// The live-update and chat streams: they end when their clients leave (found by a heartbeat) or the app
    /// stops.
    public var streams = EventStreams()
    /// How long a stop (SIGTERM, SIGINT, or the running task's cancellation) waits for responses in flight before
    /// it cancels them. Event streams are told to end at once.
    public var drainTimeout: Duration = .seconds(10)

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
        let pages = try await UIPages.load()
        let responder = LateResponder { port in
            UIResponder(
                downloads: downloads, session: session, pages: pages,
                guardian: RequestGuard(hosts: RequestGuard.hosts(host: host, port: port)), port: port, logger: logger,
                offline: offline, tokenOrigin: tokenOrigin, chat: chat, embeddings: embeddings,
                transcribe: transcribe, streams: streams)
        }
        let app = Application(
            responder: responder,
            configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: "modeldepot"),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? port
                responder.bind(port: port)
                let shown = host.contains(":") ? "[\(host)]" : host
                await onListening(URL(string: "http://\(shown):\(port)/session?token=\(session.launchToken)")!)
            },
            logger: logger)
        var configuration = ServiceGroupConfiguration(
            services: [
                .init(service: app),
                .init(
                    service: StreamCloser(streams: streams, downloads: downloads, logger: logger),
                    successTerminationBehavior: .ignore),
            ],
            gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        configuration.maximumGracefulShutdownDuration = drainTimeout
        let group = ServiceGroup(configuration: configuration)
        // The group runs in a task of its own: cancelling this one drains it rather than tearing it down.
        let running = Task { try await group.run() }
        try await withTaskCancellationHandler {
            try await running.value
        } onCancel: {
            Task { await group.triggerGracefulShutdown() }
        }
    }
}

/// Ends every event stream as soon as the app starts to stop (it is shut down before the server, which then
/// drains what is left), stops the downloads the app started so their bytes and resume records are on disk for the
/// next `ui` (which offers to resume them), and says so in the log.
struct StreamCloser: Service {
    let streams: EventStreams
    let downloads: ModelDownloads
    let logger: Logger

    func run() async throws {
        try? await gracefulShutdown()
        logger.notice(
            "stopping: event streams told to end, downloads stopped where they are; finishing the responses in flight, then exiting",
            metadata: ["streams": "\(streams.openCount)"])
        streams.closeAll()
        await downloads.stopAll()
    }
}

/// The responder is made once the port is known (port 0 picks one), since the guard checks `Host` against it.
final class LateResponder: HTTPResponder, Sendable {
    typealias Context = BasicRequestContext

    private let make: @Sendable (Int) -> UIResponder
    private let responder = Mutex<UIResponder?>(nil)

    init(make: @escaping @Sendable (Int) -> UIResponder) { self.make = make }

    func bind(port: Int) { responder.withLock { $0 = make(port) } }

    func respond(to request: Request, context: Context) async throws -> Response {
        guard let responder = responder.withLock({ $0 }) else {
            return UIResponder.error(503, "Starting; try again in a moment.")
        }
        return try await responder.respond(to: request, context: context)
    }
}
