import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// A real HTTP/1.1 server on `127.0.0.1` (port 0) that answers each request with the next scripted reply:
/// a status, headers, then body steps — send these bytes, wait for the test to open a gate, hang, reset,
/// close early. Made for streaming APIs (server-sent events), where what matters is exactly which bytes
/// arrive, when, and how the connection ends.
///
/// ```swift
/// let gate = ScriptedHTTPServer.Gate()
/// let server = try await ScriptedHTTPServer.start(replies: [
///     .eventStream([.send("data: {\"choices\":[]}\r\n\r\n"), .wait(gate), .send("data: [DONE]\n\n")])
/// ])
/// // … read the first event, then:
/// gate.open()
/// ```
/// Requests beyond the script get a 500 naming the problem.
public final class ScriptedHTTPServer: Sendable {
    /// One scripted answer.
    public struct Reply: Sendable {
        public var status: Int
        public var headers: [(String, String)]
        public var steps: [Step]

        public init(status: Int = 200, headers: [(String, String)] = [], steps: [Step]) {
            self.status = status
            self.headers = headers
            self.steps = steps
        }

        /// A `text/event-stream` body (chunked), sent step by step.
        public static func eventStream(_ steps: [Step], status: Int = 200) -> Reply {
            Reply(
                status: status,
                headers: [("Content-Type", "text/event-stream; charset=utf-8"), ("Cache-Control", "no-cache")],
                steps: steps)
        }

        /// A complete JSON body with a `Content-Length`.
        public static func json(_ text: String, status: Int = 200, headers: [(String, String)] = []) -> Reply {
            Reply(
                status: status,
                headers: [("Content-Type", "application/json"), ("Content-Length", "\(text.utf8.count)")] + headers,
                steps: [.send(text)])
        }
    }

    /// What the body does next.
    public enum Step: Sendable {
        /// Write these bytes (as one chunk) and flush.
        case send(String)
        case sendBytes([UInt8])
        /// Send nothing until the test opens the gate.
        case wait(Gate)
        /// Send nothing more and keep the connection open (until the client leaves or the server shuts down).
        case hang
        /// Reset the connection (TCP RST).
        case reset
        /// Close the connection cleanly without ending the body.
        case close
    }

    /// A latch a script waits on; the test opens it.
    public final class Gate: Sendable {
        private let state = Mutex((isOpen: false, waiters: [@Sendable () -> Void]()))

        public init() {}

        public func open() {
            let waiters = state.withLock { state -> [@Sendable () -> Void] in
                state.isOpen = true
                defer { state.waiters.removeAll() }
                return state.waiters
            }
            for waiter in waiters { waiter() }
        }

        func whenOpen(_ action: @escaping @Sendable () -> Void) {
            let runNow = state.withLock { state -> Bool in
                if state.isOpen { return true }
                state.waiters.append(action)
                return false
            }
            if runNow { action() }
        }
    }

    struct State {
        var replies: [Reply]
        var requests: [RecordedRequest] = []
        var closedConnections = 0
        var closeWaiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
        var requestWaiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
        var openChannels: [ObjectIdentifier: any Channel] = [:]
    }

    let state: Mutex<State>
    private let channel: any Channel

    /// `http://127.0.0.1:PORT`.
    public let baseURL: URL

    private init(channel: any Channel, replies: [Reply]) {
        self.channel = channel
        self.state = Mutex(State(replies: replies))
        self.baseURL = URL(string: "http://127.0.0.1:\(channel.localAddress!.port!)")!
    }

    public static func start(replies: [Reply] = []) async throws -> ScriptedHTTPServer {
        let holder = ScriptedServerHolder()
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.pipeline.configureHTTPServerPipeline().flatMapThrowing {
                    try channel.pipeline.syncOperations.addHandler(ScriptedHTTPHandler(holder: holder))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        let server = ScriptedHTTPServer(channel: channel, replies: replies)
        holder.server.withLock { $0 = server }
        return server
    }

    /// Adds replies to the end of the script.
    public func enqueue(_ replies: Reply...) {
        state.withLock { $0.replies += replies }
    }

    /// Every request received so far, with its body.
    public var requests: [RecordedRequest] { state.withLock { $0.requests } }

    /// Client connections that have closed so far.
    public var closedConnections: Int { state.withLock { $0.closedConnections } }

    /// Returns once `count` client connections have closed in all (no polling: the close wakes it).
    public func waitForClosedConnections(_ count: Int) async {
        await withCheckedContinuation { continuation in
            let done = state.withLock { state -> Bool in
                if state.closedConnections >= count { return true }
                state.closeWaiters.append((count, continuation))
                return false
            }
            if done { continuation.resume() }
        }
    }

    /// Returns once `count` requests have arrived in all.
    public func waitForRequests(_ count: Int) async {
        await withCheckedContinuation { continuation in
            let done = state.withLock { state -> Bool in
                if state.requests.count >= count { return true }
                state.requestWaiters.append((count, continuation))
                return false
            }
            if done { continuation.resume() }
        }
    }

    /// Stops listening and closes every open connection (hanging ones included).
    public func shutdown() async throws {
        let open = state.withLock { Array($0.openChannels.values) }
        for channel in open { channel.close(promise: nil) }
        try await channel.close()
    }

    func connectionOpened(_ channel: any Channel) {
        state.withLock { $0.openChannels[ObjectIdentifier(channel)] = channel }
    }

    func connectionClosed(_ channel: any Channel) {
        let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.openChannels[ObjectIdentifier(channel)] = nil
            state.closedConnections += 1
            let count = state.closedConnections
            let ready = state.closeWaiters.filter { $0.count <= count }.map(\.continuation)
            state.closeWaiters.removeAll { $0.count <= count }
            return ready
        }
        for continuation in ready { continuation.resume() }
    }

    func received(_ request: RecordedRequest) -> Reply? {
        let (reply, ready) = state.withLock { state -> (Reply?, [CheckedContinuation<Void, Never>]) in
            state.requests.append(request)
            let count = state.requests.count
            let ready = state.requestWaiters.filter { $0.count <= count }.map(\.continuation)
            state.requestWaiters.removeAll { $0.count <= count }
            return (state.replies.isEmpty ? nil : state.replies.removeFirst(), ready)
        }
        for continuation in ready { continuation.resume() }
        return reply
    }
}

final class ScriptedServerHolder: Sendable {
    let server = Mutex<ScriptedHTTPServer?>(nil)
}

/// Plays scripts on one connection, on its event loop.
final class ScriptedHTTPHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let holder: ScriptedServerHolder
    private var head: HTTPRequestHead?
    private var body: [UInt8] = []

    init(holder: ScriptedServerHolder) { self.holder = holder }

    private var server: ScriptedHTTPServer? { holder.server.withLock { $0 } }

    func channelActive(context: ChannelHandlerContext) {
        server?.connectionOpened(context.channel)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        server?.connectionClosed(context.channel)
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            body = []
        case .body(let buffer):
            body += buffer.readableBytesView
        case .end:
            guard let head, let server else { return }
            self.head = nil
            let recorded = RecordedRequest(
                method: "\(head.method)", path: head.uri, headers: head.headers.map { ($0.name, $0.value) }, body: body)
            let reply =
                server.received(recorded)
                ?? .json(#"{"error":{"message":"the test server has no scripted reply left"}}"#, status: 500)
            var headers = HTTPHeaders(reply.headers)
            if !headers.contains(name: "Content-Length") {
                headers.replaceOrAdd(name: "Transfer-Encoding", value: "chunked")
            }
            let status = HTTPResponseStatus(statusCode: reply.status)
            context.writeAndFlush(
                wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status, headers: headers))),
                promise: nil)
            play(reply.steps[...], context: context)
        }
    }

    private func play(_ steps: ArraySlice<Step>, context: ChannelHandlerContext) {
        guard let step = steps.first else {
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            return
        }
        let rest = steps.dropFirst()
        switch step {
        case .send(let text):
            write(Array(text.utf8), context: context)
            play(rest, context: context)
        case .sendBytes(let bytes):
            write(bytes, context: context)
            play(rest, context: context)
        case .wait(let gate):
            let loop = context.eventLoop
            let boxed = NIOLoopBound((self, context), eventLoop: loop)
            gate.whenOpen {
                loop.execute {
                    let (handler, context) = boxed.value
                    guard context.channel.isActive else { return }
                    handler.play(rest, context: context)
                }
            }
        case .hang:
            break
        case .reset:
            resetConnection(context.channel)
        case .close:
            context.close(promise: nil)
        }
    }

    private func write(_ bytes: [UInt8], context: ChannelHandlerContext) {
        context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: bytes)))), promise: nil)
    }

    typealias Step = ScriptedHTTPServer.Step
}
