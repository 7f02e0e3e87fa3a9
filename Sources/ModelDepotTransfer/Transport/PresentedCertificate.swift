#if MODELDEPOT_SERVER_STACK
    import Foundation
    import NIOCore
    import NIOPosix
    import NIOSSL
    import NIOTLS
    import SwiftASN1

    /// Who issued the certificate a server presents, for the error that refuses it: a second connection, through
    /// the same HTTP proxy when there is one (`CONNECT`), with verification off, that reads the certificate and
    /// closes before anything is sent. Nil when it cannot be had within a few seconds.
    enum PresentedCertificate {
        static func issuer(host: String, port: Int, proxy: ProxyServer?) async -> String? {
            guard proxy?.kind != .socks5 else { return nil }
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.certificateVerification = .none
            guard let context = try? NIOSSLContext(configuration: tls) else { return nil }
            let loop = MultiThreadedEventLoopGroup.singleton.next()
            let promise = loop.makePromise(of: String?.self)
            loop.scheduleTask(in: .seconds(5)) { promise.succeed(nil) }
            let serverName = IPAddress.parse(host) == nil ? host : nil
            let connecting = ClientBootstrap(group: loop)
                .connectTimeout(.seconds(5))
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(
                            Reader(
                                target: "\(host.contains(":") ? "[\(host)]" : host):\(port)", proxy: proxy,
                                context: context, serverName: serverName, promise: promise))
                    }
                }
                .connect(host: proxy?.host ?? host, port: proxy?.port ?? port)
            connecting.whenFailure { _ in promise.succeed(nil) }
            let issuer = try? await promise.futureResult.get()
            if let channel = try? await connecting.get() { try? await channel.close() }
            return issuer ?? nil
        }

        /// `CN=mitmproxy, O=mitmproxy`: the issuer's common name and organisation from a DER certificate.
        static func issuerName(_ der: [UInt8]) -> String? {
            guard let root = try? DER.parse(der), case .constructed(let certificate) = root.content,
                let tbs = certificate.first(where: { _ in true }), case .constructed(let fields) = tbs.content
            else { return nil }
            var nodes = Array(fields)
            // `[0] version`, when present, comes first; then the serial number, the signature algorithm, the issuer.
            if nodes.first?.identifier.tagClass == .contextSpecific { nodes.removeFirst() }
            guard nodes.count > 2, case .constructed(let names) = nodes[2].content else { return nil }
            var parts: [String] = []
            for name in names {
                guard case .constructed(let attributes) = name.content else { continue }
                for attribute in attributes {
                    guard case .constructed(let pair) = attribute.content else { continue }
                    let items = Array(pair)
                    guard items.count == 2, let oid = try? ASN1ObjectIdentifier(derEncoded: items[0]),
                        case .primitive(let value) = items[1].content
                    else { continue }
                    let label = oid == [2, 5, 4, 3] ? "CN" : oid == [2, 5, 4, 10] ? "O" : nil
                    if let label { parts.append("\(label)=\(String(decoding: value, as: UTF8.self))") }
                }
            }
            return parts.isEmpty ? nil : parts.joined(separator: ", ")
        }

        /// Asks the proxy for a tunnel when there is one, then shakes hands and reads the certificate.
        final class Reader: ChannelInboundHandler {
            typealias InboundIn = ByteBuffer
            typealias OutboundOut = ByteBuffer

            let target: String
            let proxy: ProxyServer?
            let context: NIOSSLContext
            let serverName: String?
            let promise: EventLoopPromise<String?>
            var answer = ByteBuffer()
            var tunnelled = false

            init(
                target: String, proxy: ProxyServer?, context: NIOSSLContext, serverName: String?,
                promise: EventLoopPromise<String?>
            ) {
                self.target = target
                self.proxy = proxy
                self.context = context
                self.serverName = serverName
                self.promise = promise
            }

            func channelActive(context: ChannelHandlerContext) {
                guard let proxy else { return startTLS(context) }
                var request = "CONNECT \(target) HTTP/1.1\r\nHost: \(target)\r\n"
                if let user = proxy.username {
                    let pair = Data("\(user):\(proxy.password ?? "")".utf8).base64EncodedString()
                    request += "Proxy-Authorization: Basic \(pair)\r\n"
                }
                context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: request + "\r\n")), promise: nil)
            }

            func channelRead(context: ChannelHandlerContext, data: NIOAny) {
                guard proxy != nil, !tunnelled else { return }
                var bytes = unwrapInboundIn(data)
                answer.writeBuffer(&bytes)
                let text = String(buffer: answer)
                guard text.contains("\r\n\r\n") else {
                    if answer.readableBytes > 16 << 10 { finish(context, nil) }
                    return
                }
                guard text.hasPrefix("HTTP/1.1 200") || text.hasPrefix("HTTP/1.0 200") else {
                    return finish(context, nil)
                }
                tunnelled = true
                startTLS(context)
            }

            func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
                guard let event = event as? TLSUserEvent, case .handshakeCompleted = event else { return }
                let handler = try? context.pipeline.syncOperations.handler(type: NIOSSLClientHandler.self)
                let der = try? handler?.peerCertificate?.toDERBytes()
                finish(context, der.flatMap { $0 }.flatMap(PresentedCertificate.issuerName))
            }

            func errorCaught(context: ChannelHandlerContext, error: any Error) { finish(context, nil) }

            private func startTLS(_ context: ChannelHandlerContext) {
                do {
                    let tls = try NIOSSLClientHandler(context: self.context, serverHostname: serverName)
                    try context.pipeline.syncOperations.addHandler(tls, position: .before(self))
                } catch {
                    finish(context, nil)
                }
            }

            private func finish(_ context: ChannelHandlerContext, _ issuer: String?) {
                promise.succeed(issuer)
                context.close(promise: nil)
            }
        }
    }
#endif
