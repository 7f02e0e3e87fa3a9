#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A bare TCP connection to a port on 127.0.0.1, for tests that must behave as no HTTP client library would:
/// half-sent requests, a client that stops reading, pipelined requests, a port that refuses.
package final class LoopbackConnection: Sendable {
    package let descriptor: Int32

    /// Connects to `port`; `receiveBuffer` fixes the kernel's receive buffer (no autotuning), so a client that
    /// stops reading holds the server back after about that many bytes.
    package init(port: Int, receiveBuffer: Int32? = nil) throws {
        // Everything happens on a local until the connection stands: a class initializer that throws after its
        // stored properties are set runs `deinit`, which would close the descriptor a second time — by then
        // perhaps another thread's file (a double close once made a download's ftruncate fail with EBADF).
        #if canImport(Glibc)
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw SystemCallError("Cannot open a socket", code: errno) }
        if var size = receiveBuffer {
            _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
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
            let code = errno
            _ = FileStorage.close(descriptor: descriptor)
            throw SystemCallError("Cannot connect to 127.0.0.1:\(port)", code: code)
        }
        self.descriptor = descriptor
    }

    deinit { _ = FileStorage.close(descriptor: descriptor) }

    /// Whether connecting to `port` is refused now.
    package static func refuses(port: Int) -> Bool { (try? LoopbackConnection(port: port)) == nil }

    package func transmit(_ text: String) {
        _ = text.utf8CString.withUnsafeBufferPointer { bytes in
            // No SIGPIPE when the server has closed first: Linux takes a flag per call, Darwin a socket option.
            #if canImport(Darwin)
                var on: Int32 = 1
                _ = setsockopt(descriptor, SOL_SOCKET, SO_NOSIGPIPE, &on, socklen_t(MemoryLayout<Int32>.size))
                return send(descriptor, bytes.baseAddress, bytes.count - 1, 0)
            #else
                return send(descriptor, bytes.baseAddress, bytes.count - 1, Int32(MSG_NOSIGNAL))
            #endif
        }
    }

    /// What one receive gives without waiting (at most `limit` bytes), nil once the peer has closed its end or
    /// the connection failed; empty when nothing has arrived yet.
    package func receive(upTo limit: Int = 1 << 16) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: limit)
        let count = recv(descriptor, &buffer, limit, Int32(MSG_DONTWAIT))
        if count > 0 { return Array(buffer[0..<count]) }
        if count < 0, errno == EAGAIN || errno == EWOULDBLOCK { return [] }
        return nil
    }

    /// True once the server closed its end (any bytes still unread are discarded).
    package var isClosedByPeer: Bool {
        while let bytes = receive() {
            if bytes.isEmpty { return false }
        }
        return true
    }
}
