import ModelDepotHTTP
import ModelDepotPlatform
import NIOCore
import NIOHTTP1

/// Sends the body of a response about a file at rest with `sendfile(2)` (NIO's `FileRegion`) instead of reading
/// it through Swift, as nginx does.
///
/// Hummingbird's body writer takes `ByteBuffer`s only, so this handler sits below its HTTP codec, between the
/// `HTTPResponseEncoder` and the rest, where a body part may be a file region. A route that has made every check
/// (token, path, preconditions, range) opens the file, hands it here with ``stage(_:)``, and answers with an empty
/// body and the token in ``markerField``; when that response passes, the marker is taken off and the staged
/// region goes out before its end. Everything else passes untouched.
///
/// While a region is going out its file's size is read every ``truncationCheckInterval``: `sendfile` on a file
/// truncated under it sends nothing, and NIO retries a write that made no progress without end, so a shrunk
/// file closes the connection short of its `Content-Length`, as a read that ends early does.
final class FileRegionHandler: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    /// The response header that names a staged file; it never leaves the server.
    static let markerField = "x-modeldepot-file-region"
    static let truncationCheckInterval = TimeAmount.milliseconds(200)

    /// An open file and the bytes of it to send.
    struct Staged: Sendable {
        let handle: NIOFileHandle
        let range: Range<Int>
    }

    private var staged: [UInt64: Staged] = [:]
    private var nextToken = UInt64.random(in: 1...(1 << 40))
    /// The file whose response head has gone out and whose body goes before the next end.
    private var sending: Staged?
    /// Responses whose file is still being sent (their end not yet written to the socket).
    private var regionsInFlight = 0
    /// Closes asked for while a file was still going out, done once it has.
    private var closesWaiting: [(mode: CloseMode, promise: EventLoopPromise<Void>?)] = []
    /// The server's drain: once it has run out of time, a close goes through even with a file going out.
    private let drain: ConnectionDrain

    init(drain: ConnectionDrain) {
        self.drain = drain
    }

    /// Keeps `file` until the response that carries the returned token in ``markerField`` is written; the handler
    /// closes it after sending it, or when the connection goes first. Call on the channel's event loop.
    func stage(_ file: Staged) -> UInt64 {
        nextToken &+= 1
        staged[nextToken] = file
        return nextToken
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        // With nothing staged the part passes unread: looking into every head cost a small answer 17 retains
        // (issue 63). Only `FileResponse` sets the marker, right after staging its file on this loop, so no head
        // can carry one then; debug builds (the tests) check that it holds.
        guard sending != nil || !staged.isEmpty else {
            assert(!Self.carriesMarker(unwrapOutboundIn(data)), "a response names a file that was never staged")
            context.write(data, promise: promise)
            return
        }
        switch unwrapOutboundIn(data) {
        case .head(var head) where head.headers.contains(name: Self.markerField):
            let token = head.headers.first(name: Self.markerField).flatMap(UInt64.init)
            head.headers.remove(name: Self.markerField)
            guard let token, let file = staged.removeValue(forKey: token) else {
                // Only our routes set the field, right after staging; a stray one means a bug, and an empty body
                // under a Content-Length must not go out.
                promise?.fail(ChannelError.inappropriateOperationForState)
                context.close(promise: nil)
                return
            }
            sending = file
            context.write(wrapOutboundOut(.head(head)), promise: promise)
        case .end(let trailers) where sending != nil:
            let file = sending!
            sending = nil
            let watch = watchForTruncation(of: file, context: context)
            context.write(
                wrapOutboundOut(
                    .body(
                        .fileRegion(
                            FileRegion(
                                fileHandle: file.handle, readerIndex: file.range.lowerBound,
                                endIndex: file.range.upperBound)))),
                promise: nil)
            let done = context.eventLoop.makePromise(of: Void.self)
            regionsInFlight += 1
            done.futureResult.assumeIsolated().whenComplete { result in
                watch.cancel()
                try? file.handle.close()
                self.regionsInFlight -= 1
                if self.regionsInFlight == 0 { self.closeWhatWaited(context: context) }
                promise?.completeWith(result)
            }
            context.write(wrapOutboundOut(.end(trailers)), promise: done)
        default:
            context.write(data, promise: promise)
        }
    }

    private static func carriesMarker(_ part: HTTPServerResponsePart) -> Bool {
        if case .head(let head) = part { return head.headers.contains(name: markerField) }
        return false
    }

    /// Hummingbird closes a connection as soon as a response's end has been written when it drains (SIGTERM)
    /// or was asked to close; with a file still going out behind that end, the close would cut the file short.
    /// It waits for the file instead, until the drain's time is up (``ConnectionDrain/cutOff()`` closes the
    /// connection again, and then the file is cut short: the client sees fewer bytes than its `Content-Length`).
    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        guard regionsInFlight > 0, mode != .input, !drain.isCutOff else {
            context.close(mode: mode, promise: promise)
            return
        }
        closesWaiting.append((mode, promise))
    }

    private func closeWhatWaited(context: ChannelHandlerContext) {
        let waiting = closesWaiting
        closesWaiting = []
        for close in waiting { context.close(mode: close.mode, promise: close.promise) }
    }

    private func watchForTruncation(of file: Staged, context: ChannelHandlerContext) -> RepeatedTask {
        // Closed from here, below this handler's own close (which would wait for this very file).
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        return context.eventLoop.scheduleRepeatedTask(
            initialDelay: Self.truncationCheckInterval, delay: Self.truncationCheckInterval
        ) { _ in
            if Self.size(of: file.handle) < Int64(file.range.upperBound) { bound.value.close(promise: nil) }
        }
    }

    private static func size(of handle: NIOFileHandle) -> Int64 {
        let status = try? handle.withUnsafeFileDescriptor { FileStatus(descriptor: $0) }
        return status.flatMap { $0 }?.size ?? 0
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        for file in staged.values { try? file.handle.close() }
        staged = [:]
        if let file = sending { try? file.handle.close() }
        sending = nil
        for close in closesWaiting { close.promise?.succeed() }
        closesWaiting = []
    }
}
