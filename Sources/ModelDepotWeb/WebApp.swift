import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import ModelDepot
import ModelDepotScreens
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

    /// Serves until the task is cancelled or the process gets SIGINT/SIGTERM.
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
                transcribe: transcribe)
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
        try await app.runService()
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
