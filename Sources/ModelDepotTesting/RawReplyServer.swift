import Foundation
import ModelDepotPlatform
import NIOCore
import NIOPosix
import Synchronization

/// A TCP server on `127.0.0.1` (port 0) that does not speak HTTP: on each connection it waits for the first
/// bytes of the request, then sends a fixed reply and keeps the connection open — or sends nothing at all.
/// For clients facing what a hostile or misconfigured server does: an SSH banner, endless headers, silence.
public final class RawReplyServer: Sendable {
    public let baseURL: URL
    private let channel: any Channel
    private let state = Mutex((accepted: 0, open: [any Channel]()))

    private init(channel: any Channel) {
        self.channel = channel
        self.baseURL = URL(string: "http://127.0.0.1:\(channel.localAddress!.port!)")!
    }

    /// - Parameter reply: the bytes sent once the request starts arriving; nil sends nothing, ever.
    public static func start(reply: [UInt8]?) async throws -> RawReplyServer {
        let holder = Mutex<RawReplyServer?>(nil)
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                holder.withLock { $0?.accepted(channel) }
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ReplyOnFirstRead(reply: reply))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        let server = RawReplyServer(channel: channel)
        holder.withLock { $0 = server }
        return server
    }

    public func url(_ path: String) -> URL { URL(string: baseURL.absoluteString + path)! }

    /// Connections accepted so far: how many times a client tried.
    public var acceptedConnections: Int { state.withLock { $0.accepted } }

    private func accepted(_ channel: any Channel) {
        state.withLock { state in
            state.accepted += 1
            state.open.append(channel)
        }
    }

    public func shutdown() async throws {
        let open = state.withLock { state -> [any Channel] in
            defer { state.open.removeAll() }
            return state.open
        }
        for channel in open { channel.close(promise: nil) }
        try await channel.close()
    }
}

private final class ReplyOnFirstRead: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    let reply: [UInt8]?
    private let sent = Mutex(false)

    init(reply: [UInt8]?) { self.reply = reply }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard let reply,
            sent.withLock({ sent in
                defer { sent = true }; return !sent
            })
        else { return }
        context.writeAndFlush(NIOAny(context.channel.allocator.buffer(bytes: reply)), promise: nil)
    }
}

/// A port on 127.0.0.1 that nothing listens on: bound to learn a free number, then released. Connecting to it
/// is refused (a test of refused connections), and a server started right after can take it (nginx, which
/// cannot report the port it picked).
public func unusedLoopbackPort() throws -> Int {
    try LoopbackPort.unused()
}
