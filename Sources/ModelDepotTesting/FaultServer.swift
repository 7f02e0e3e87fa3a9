import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// A real HTTP/1.1 server on `127.0.0.1` (port 0) that serves files from memory, with ranges, ETags and
/// `If-Range`, and misbehaves on cue: resets, truncations, stalls, wrong bytes, error statuses, a file that
/// changes mid-download.
///
/// ```swift
/// let server = try await FaultServer.start(files: ["/model.bin": bytes])
/// defer { Task { try await server.shutdown() } }
/// server.inject(.status(503), times: 3)
/// server.inject(.reset(afterBytes: 10_000), when: .laterRanges)
/// ```
/// Faults are used up in the order injected, by the first request each one matches.
public final class FaultServer: Sendable {
    public struct Options: Sendable {
        /// Answer `Range` requests with 206; when false, always 200 with the whole file.
        public var supportsRanges = true
        /// Send `Content-Length`; when false, bodies are chunked.
        public var sendsContentLength = true
        /// Send `ETag` and `Last-Modified` headers.
        public var sendsValidators = true
        public init() {}
    }

    struct StoredFile {
        var bytes: ByteBuffer
        var version: Int
    }

    struct Rule {
        var fault: Fault
        var matcher: RequestMatcher
        var remaining: Int
    }

    struct State {
        var files: [String: StoredFile]
        var rules: [Rule] = []
        var requests: [RecordedRequest] = []
        var bodyBytesSent: Int64 = 0
        var openConnections = 0
        var bodiesInFlight = 0
        var peakBodiesInFlight = 0
        var stalledChannels: [any Channel] = []
        /// Body bytes (over all requests) after which every body waits until the hold is lifted.
        var holdBodiesAt: Int64?
    }

    let state: Mutex<State>
    let options: Options
    private let channel: any Channel

    /// The server's base URL, `http://127.0.0.1:PORT`.
    public let baseURL: URL

    private init(channel: any Channel, initial: State, options: Options) {
        self.channel = channel
        self.state = Mutex(initial)
        self.options = options
        self.baseURL = URL(string: "http://127.0.0.1:\(channel.localAddress!.port!)")!
    }

    /// Starts a server on a free port of 127.0.0.1 serving `files` (paths start with `/`).
    public static func start(files: [String: [UInt8]], options: Options = Options()) async throws -> FaultServer {
        let initial = State(files: files.mapValues { StoredFile(bytes: ByteBuffer(bytes: $0), version: 1) })
        let holder = ServerHolder()
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.pipeline.configureHTTPServerPipeline().flatMapThrowing {
                    try channel.pipeline.syncOperations.addHandler(FaultServerHandler(holder: holder))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        let server = FaultServer(channel: channel, initial: initial, options: options)
        holder.server.withLock { $0 = server }
        return server
    }

    /// Stops listening and drops stalled connections.
    public func shutdown() async throws {
        let stalled = state.withLock { state -> [any Channel] in
            defer { state.stalledChannels.removeAll() }
            return state.stalledChannels
        }
        for channel in stalled { channel.close(promise: nil) }
        try await channel.close()
    }

    /// The URL of a served path.
    public func url(_ path: String) -> URL { URL(string: baseURL.absoluteString + path)! }

    /// Applies `fault` to the next `times` requests that `matcher` accepts.
    public func inject(_ fault: Fault, times: Int = 1, when matcher: RequestMatcher = .any) {
        state.withLock { $0.rules.append(Rule(fault: fault, matcher: matcher, remaining: times)) }
    }

    /// Drops every injected fault not yet used, and lifts a hold set by ``holdBodies(afterTotalBytes:)``.
    public func clearFaults() {
        state.withLock { state in
            state.rules.removeAll()
            state.holdBodiesAt = nil
        }
    }

    /// Stops sending body bytes once `afterTotalBytes` have been sent over all requests, keeping every
    /// connection open, until ``clearFaults()``. A test that must act while a download is under way (a `kill -9`,
    /// a Ctrl-C) waits for the hold instead of racing a throttled transfer that may finish while it is starved.
    public func holdBodies(afterTotalBytes: Int64) {
        state.withLock { $0.holdBodiesAt = afterTotalBytes }
    }

    /// Replaces (or adds) a file; its ETag changes.
    public func setFile(_ path: String, _ bytes: [UInt8]) {
        state.withLock { state in
            let version = (state.files[path]?.version ?? 0) + 1
            state.files[path] = StoredFile(bytes: ByteBuffer(bytes: bytes), version: version)
        }
    }

    /// Every request received so far, in order.
    public var requests: [RecordedRequest] { state.withLock { $0.requests } }

    /// Body bytes written to sockets so far, over all requests.
    public var bodyBytesSent: Int64 { state.withLock { $0.bodyBytesSent } }

    /// Client connections currently open.
    public var openConnections: Int { state.withLock { $0.openConnections } }

    /// The most response bodies that were being sent at the same time so far.
    public var peakBodiesInFlight: Int { state.withLock { $0.peakBodiesInFlight } }

    /// Faults injected but not yet used.
    public var pendingFaults: Int { state.withLock { $0.rules.reduce(0) { $0 + $1.remaining } } }
}

/// Lets handlers reach the server object, which exists only after the socket is bound.
final class ServerHolder: Sendable {
    let server = Mutex<FaultServer?>(nil)
}
