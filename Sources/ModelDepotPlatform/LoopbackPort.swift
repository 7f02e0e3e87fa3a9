#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Ports on 127.0.0.1.
package enum LoopbackPort {
    /// A port nothing listens on right now: bound to learn the kernel's pick for port 0, then released. A
    /// server started next may take it (one that cannot report the port it picked, like nginx or a child
    /// process), and connecting to it meanwhile is refused.
    package static func unused() throws -> Int {
        // glibc declares SOCK_STREAM as an enum case, Darwin's `<sys/socket.h>` as an Int32 macro.
        #if canImport(Glibc)
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw SystemCallError("Cannot open a socket", code: errno) }
        defer { FileStorage.close(descriptor: descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bind(descriptor, socketAddress, length) == 0 && getsockname(descriptor, socketAddress, &length) == 0
            }
        }
        guard bound else { throw SystemCallError("Cannot find a free port on 127.0.0.1", code: errno) }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
