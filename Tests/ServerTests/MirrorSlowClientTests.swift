import Foundation
import Logging
import ModelDepot
import ModelDepotServer
import ModelDepotTesting
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Slow and idle clients cannot hold the mirror: connections without a complete request are closed after the
/// idle timeout, and past the connection cap new clients wait instead of the server spinning.
@Suite struct MirrorSlowClientTests {
    static let layout: [String: [UInt8]] = ["acme/tiny/config.json": Array("{}".utf8)]

    @Test func slowAndIdleSocketsAreClosedAndANormalClientIsStillServed() async throws {
        let root = try TemporaryDirectory(prefix: "modeldepot-slow")
        defer { root.remove() }
        for (path, bytes) in Self.layout {
            try FileManager.default.createDirectory(
                at: root.path(path).deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(bytes).write(to: root.path(path))
        }
        var server = MirrorServer(
            root: root.url, logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
        server.maxConnections = 16
        server.idleTimeout = .milliseconds(300)
        try await MirrorFixture.serving(server, root: root) { mirror in
            let port = mirror.baseURL.port!
            // More slow clients than the cap: half a request head, idle sockets, and one that trickles.
            var opened: [Int32] = []
            for index in 0..<40 {
                let socket = try RawClient.dial(port: port)
                opened.append(socket)
                if index % 2 == 0 { RawClient.transmit(socket, "GET /api/models/acme/tiny HTTP/1.1\r\nHost: x\r\n") }
            }
            let sockets = opened
            defer { for socket in sockets { close(socket) } }
            // A normal client is served: at once while there is room, else as soon as slow ones are dropped.
            let reply = try await withTimeLimit(30) { try await mirror.get("/api/models/acme/tiny") }
            #expect(reply.status == 200)
            // Every slow socket is closed by the server (no request completes on them).
            let allClosed = await waitUntil(timeout: .seconds(30)) { sockets.allSatisfy(RawClient.isClosedByPeer) }
            #expect(allClosed)
            // An idle keep-alive connection after a complete request is closed too.
            let keepAlive = try RawClient.dial(port: port)
            defer { close(keepAlive) }
            RawClient.transmit(keepAlive, "GET /api/models/acme/tiny HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(await waitUntil(timeout: .seconds(30)) { RawClient.isClosedByPeer(keepAlive) })
        }
    }
}

/// Plain POSIX client sockets, to behave as no HTTP client library would.
enum RawClient {
    static func dial(port: Int) throws -> Int32 {
        #if canImport(Glibc)
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            close(descriptor)
            throw ModelDepotError(.network, "cannot connect to 127.0.0.1:\(port): errno \(errno)")
        }
        return descriptor
    }

    static func transmit(_ socket: Int32, _ text: String) {
        _ = text.utf8CString.withUnsafeBufferPointer { send(socket, $0.baseAddress, $0.count - 1, 0) }
    }

    /// True once the server closed its end: a read returns end of file (after any reply bytes) or an error.
    static func isClosedByPeer(_ socket: Int32) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(socket, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if count > 0 { continue }
            if count == 0 { return true }
            return errno != EAGAIN && errno != EWOULDBLOCK
        }
    }
}
