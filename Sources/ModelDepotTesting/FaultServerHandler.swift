import Foundation
import ModelDepotTransfer
import NIOCore
import NIOHTTP1
import NIOPosix

/// Answers one connection's requests for a ``FaultServer``, applying injected faults. Runs on the channel's
/// event loop only; bodies are written as fast as the socket accepts them (writability backpressure).
final class FaultServerHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    enum Ending { case complete, reset, truncate, stall }

    struct PendingBody {
        var bytes: ByteBuffer
        var range: Range<Int>
        var offset: Int
        var limit: Int
        var corruptAt: Int?
        var bytesPerSecond: Int?
        var ending: Ending
        var keepAlive: Bool
    }

    private let holder: ServerHolder
    private var head: HTTPRequestHead?
    private var pending: PendingBody? {
        didSet {
            // Count bodies being sent at once (for connection-budget assertions).
            guard (oldValue == nil) != (pending == nil) else { return }
            let delta = pending == nil ? -1 : 1
            holder.server.withLock { $0 }?.state.withLock { state in
                state.bodiesInFlight += delta
                state.peakBodiesInFlight = max(state.peakBodiesInFlight, state.bodiesInFlight)
            }
        }
    }
    private var isPumping = false

    init(holder: ServerHolder) { self.holder = holder }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): self.head = head
        case .body: break
        case .end:
            if let head { respond(to: head, context: context) }
            head = nil
        }
    }

    func channelActive(context: ChannelHandlerContext) {
        holder.server.withLock { $0 }?.state.withLock { $0.openConnections += 1 }
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        // The client went away: stop sending (and counting) the rest of the body.
        pending = nil
        holder.server.withLock { $0 }?.state.withLock { $0.openConnections -= 1 }
        context.fireChannelInactive()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable, pending?.bytesPerSecond == nil { pump(context: context) }
        context.fireChannelWritabilityChanged()
    }

    private func respond(to head: HTTPRequestHead, context: ChannelHandlerContext) {
        guard let server = holder.server.withLock({ $0 }) else { return }
        let path = String(head.uri.prefix { $0 != "?" })
        let recorded = RecordedRequest(
            method: "\(head.method)", path: path, headers: head.headers.map { ($0.name, $0.value) })
        let (fault, file) = server.state.withLock { state -> (Fault?, FaultServer.StoredFile?) in
            state.requests.append(recorded)
            var fault: Fault?
            if let index = state.rules.firstIndex(where: { $0.matcher.matches(recorded) }) {
                fault = state.rules[index].fault
                state.rules[index].remaining -= 1
                if state.rules[index].remaining <= 0 { state.rules.remove(at: index) }
            }
            if case .replaceContent(let bytes) = fault {
                state.files[path] = FaultServer.StoredFile(
                    bytes: ByteBuffer(bytes: bytes), version: (state.files[path]?.version ?? 0) + 1)
            }
            return (fault, state.files[path])
        }
        let keepAlive = head.isKeepAlive
        switch fault {
        case .status(let code, let headers, let body):
            var fields = HTTPHeaders(headers)
            fields.replaceOrAdd(name: "Content-Length", value: "\(body.utf8.count)")
            sendSimple(status: code, headers: fields, body: body, keepAlive: keepAlive, context: context)
            return
        case .redirect(let location, let code):
            sendSimple(
                status: code, headers: ["Location": location, "Content-Length": "0"], body: "", keepAlive: keepAlive,
                context: context)
            return
        default: break
        }
        guard let file else {
            sendSimple(
                status: 404, headers: ["Content-Length": "9"], body: "not found", keepAlive: keepAlive, context: context
            )
            return
        }
        var headers = HTTPHeaders()
        let etag = "\"v\(file.version)-\(file.bytes.readableBytes)\""
        let lastModified = "Mon, 0\(min(file.version, 9)) Jan 2024 00:00:00 GMT"
        if server.options.sendsValidators {
            headers.add(name: "ETag", value: etag)
            headers.add(name: "Last-Modified", value: lastModified)
        }
        let size = file.bytes.readableBytes
        var status = HTTPResponseStatus.ok
        var range = 0..<size
        var rangesAllowed = server.options.supportsRanges
        if case .ignoreRange = fault { rangesAllowed = false }
        if rangesAllowed { headers.add(name: "Accept-Ranges", value: "bytes") }
        if rangesAllowed, let rangeHeader = head.headers.first(name: "Range") {
            let ifRange = head.headers.first(name: "If-Range")
            if ifRange == nil || ifRange == etag || ifRange == lastModified {
                switch ByteRangeRequest.parse(rangeHeader, size: size) {
                case .satisfiable(let requested):
                    status = .partialContent
                    range = requested
                    headers.add(
                        name: "Content-Range",
                        value: "bytes \(requested.lowerBound)-\(requested.upperBound - 1)/\(size)")
                case .unsatisfiable:
                    headers.add(name: "Content-Range", value: "bytes */\(size)")
                    headers.add(name: "Content-Length", value: "0")
                    sendSimple(status: 416, headers: headers, body: "", keepAlive: keepAlive, context: context)
                    return
                case .ignored: break
                }
            }
        }
        if server.options.sendsContentLength { headers.add(name: "Content-Length", value: "\(range.count)") }
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        context.write(
            wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status, headers: headers))),
            promise: nil)
        if head.method == .HEAD {
            finish(ending: .complete, keepAlive: keepAlive, context: context)
            return
        }
        var body = PendingBody(
            bytes: file.bytes, range: range, offset: range.lowerBound, limit: range.upperBound, corruptAt: nil,
            bytesPerSecond: nil, ending: .complete, keepAlive: keepAlive)
        switch fault {
        case .reset(let after): body.limit = min(range.upperBound, range.lowerBound + after); body.ending = .reset
        case .truncate(let after): body.limit = min(range.upperBound, range.lowerBound + after); body.ending = .truncate
        case .stall(let after): body.limit = min(range.upperBound, range.lowerBound + after); body.ending = .stall
        case .corrupt(let at): body.corruptAt = range.lowerBound + at
        case .throttle(let rate): body.bytesPerSecond = max(1, rate)
        default: break
        }
        pending = body
        pump(context: context)
    }

    /// Writes body chunks while the socket takes them (or one chunk per tick when throttled).
    ///
    /// A write can synchronously fire `channelWritabilityChanged`, which calls back in here: the flag keeps
    /// that nested call from writing the same bytes twice.
    private func pump(context: ChannelHandlerContext) {
        guard !isPumping, pending != nil, context.channel.isActive else { return }
        isPumping = true
        defer { isPumping = false }
        // A flush may drain the socket (and fire a writability change that the guard above swallowed), so
        // keep going while the channel stays writable.
        repeat {
            guard var body = pending else { return }
            let chunkSize = body.bytesPerSecond.map { max(1, $0 / 20) } ?? 64 << 10
            // What the server's hold still lets through (unlimited without one).
            var allowance =
                holder.server.withLock { $0 }?.state.withLock { state in
                    state.holdBodiesAt.map { max(0, $0 - state.bodyBytesSent) }
                } ?? Int64.max
            if allowance == 0 {
                // Held: closed with the stalled ones when the server shuts down, if the hold is never lifted.
                let channel = context.channel
                holder.server.withLock { $0 }?.state.withLock { state in
                    if !state.stalledChannels.contains(where: { $0 === channel }) {
                        state.stalledChannels.append(channel)
                    }
                }
                recheckLater(context: context)
                return
            }
            var wrote = 0
            while body.offset < body.limit && allowance > 0 && (context.channel.isWritable || wrote == 0) {
                let end = min(body.limit, body.offset + min(chunkSize, Int(clamping: allowance)))
                allowance -= Int64(end - body.offset)
                var buffer = body.bytes.getSlice(at: body.offset, length: end - body.offset)!
                if let corrupt = body.corruptAt, (body.offset..<end).contains(corrupt) {
                    let index = corrupt - body.offset
                    buffer.setInteger(buffer.getInteger(at: index, as: UInt8.self)! ^ 0xFF, at: index)
                }
                wrote += end - body.offset
                body.offset = end
                pending = body
                context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
                if body.bytesPerSecond != nil { break }
            }
            holder.server.withLock { $0 }?.state.withLock { $0.bodyBytesSent += Int64(wrote) }
            context.flush()
            if body.offset >= body.limit {
                pending = nil
                finish(ending: body.ending, keepAlive: body.keepAlive, context: context)
                return
            }
            if body.bytesPerSecond != nil || allowance == 0 {
                recheckLater(context: context)
                return
            }
        } while context.channel.isWritable && context.channel.isActive
    }

    /// Pumps again after a tick: the throttle's pace, or a look at whether the server's hold was lifted.
    private func recheckLater(context: ChannelHandlerContext) {
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        context.eventLoop.scheduleTask(in: .milliseconds(50)) {
            let (handler, context) = loopBound.value
            handler.pump(context: context)
        }
    }

    private func finish(ending: Ending, keepAlive: Bool, context: ChannelHandlerContext) {
        switch ending {
        case .complete:
            let promise: EventLoopPromise<Void>? = keepAlive ? nil : context.eventLoop.makePromise()
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: promise)
            if let promise {
                let channel = context.channel
                promise.futureResult.whenComplete { _ in channel.close(promise: nil) }
            }
        case .reset:
            resetConnection(context.channel)
        case .truncate:
            context.close(promise: nil)
        case .stall:
            let channel = context.channel
            holder.server.withLock { $0 }?.state.withLock { $0.stalledChannels.append(channel) }
        }
    }

    private func sendSimple(
        status: Int, headers: HTTPHeaders, body: String, keepAlive: Bool, context: ChannelHandlerContext
    ) {
        var headers = headers
        if !keepAlive { headers.replaceOrAdd(name: "Connection", value: "close") }
        let head = HTTPResponseHead(version: .http1_1, status: HTTPResponseStatus(statusCode: status), headers: headers)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        if !body.isEmpty {
            context.write(
                wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(string: body)))), promise: nil)
        }
        finish(ending: .complete, keepAlive: keepAlive, context: context)
    }
}

/// Closes `channel` with a TCP RST instead of a FIN (SO_LINGER 0): a real "connection reset by peer".
func resetConnection(_ channel: any Channel) {
    if let provider = channel as? any SocketOptionProvider {
        provider.setSoLinger(linger(l_onoff: 1, l_linger: 0)).whenComplete { _ in channel.close(promise: nil) }
    } else {
        channel.close(promise: nil)
    }
}
