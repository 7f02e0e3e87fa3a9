import HummingbirdCore
import Logging
import NIOCore
import NIOSSL
import Synchronization

/// The connections one server has open, so that a drain that runs out of time ends them.
///
/// A graceful stop lets responses in flight finish; some never would — a file read at 100 kB/s, an event stream, a
/// pull-through waiting on a silent upstream — and a service manager (systemd, Docker, Kubernetes: 30 s by default)
/// then kills the process. At the drain's deadline ``cutOff()`` closes every connection still open: a response
/// ended that way is a body short of its `Content-Length` (or a TLS stream without its close), which every client
/// notices, never a short file that looks whole. Handlers that hold a close back until their body is out (the
/// `sendfile` path) let it through once ``isCutOff`` is true.
public final class ConnectionDrain: Sendable {
    private struct State {
        var channels: [ObjectIdentifier: any Channel] = [:]
        var cutOff = false
    }

    private let state = Mutex(State())

    public init() {}

    /// True once the drain's time is up: every close goes through at once.
    public var isCutOff: Bool { state.withLock { $0.cutOff } }

    /// Connections open now.
    public var openCount: Int { state.withLock { $0.channels.count } }

    /// Follows `channel` until it closes; one that arrives after the cut-off is closed at once.
    func track(_ channel: any Channel) {
        let key = ObjectIdentifier(channel)
        let closeNow = state.withLock { state in
            if state.cutOff { return true }
            state.channels[key] = channel
            return false
        }
        if closeNow {
            Self.closeAtOnce(channel)
            return
        }
        channel.closeFuture.whenComplete { [weak self] _ in
            _ = self?.state.withLock { $0.channels.removeValue(forKey: key) }
        }
    }

    /// Closes every open connection, now and from now on; returns how many were open.
    @discardableResult
    public func cutOff() -> Int {
        let open = state.withLock { state in
            state.cutOff = true
            return Array(state.channels.values)
        }
        for channel in open { Self.closeAtOnce(channel) }
        return open.count
    }

    /// Closes the socket without a goodbye: a TLS connection's close would otherwise wait, behind the unread
    /// response, for its `close_notify` to go out and the peer's to come back (NIOSSL's shutdown timeout, 5 s),
    /// past the point a service manager kills the process. Closing from the TLS handler's own context goes to the
    /// pipeline's head, below it.
    static func closeAtOnce(_ channel: any Channel) {
        channel.eventLoop.execute {
            if let tls = try? channel.pipeline.syncOperations.context(handlerType: NIOSSLServerHandler.self) {
                tls.close(promise: nil)
            } else {
                channel.close(promise: nil)
            }
        }
    }
}

/// A server's child channel whose connections a ``ConnectionDrain`` follows.
public struct DrainTrackedChannel<Base: ServerChildChannel>: ServerChildChannel {
    public typealias Value = Base.Value

    let base: Base
    let drain: ConnectionDrain

    public init(_ base: Base, drain: ConnectionDrain) {
        self.base = base
        self.drain = drain
    }

    public func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        drain.track(channel)
        return base.setup(channel: channel, logger: logger)
    }

    public func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}
