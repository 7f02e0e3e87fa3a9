#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The DNS-SD (Bonjour) C API of `<dns_sd.h>`, loaded at run time rather than linked, so the package builds on a
/// machine without it and a feature that wants it says what to install instead of failing to start.
///
/// One interface serves both platforms: Apple's own implementation is in libSystem (`libsystem_dnssd.dylib`, the
/// daemon mDNSResponder); on Linux Avahi ships the same calls as a compatibility library (Debian's
/// `libavahi-compat-libdnssd1`), which talks to `avahi-daemon` over the D-Bus system bus
/// (`DBUS_SYSTEM_BUS_ADDRESS` names another bus). Avahi's library leaves out a few calls (`DNSServiceGetAddrInfo`
/// among them), so addresses are asked with `DNSServiceQueryRecord`, which both implement.
///
/// The calls used, with their C types (`DNSServiceRef` is an opaque pointer, `DNSServiceFlags` a `uint32_t`,
/// `DNSServiceErrorType` an `int32_t`, ports in network byte order):
/// `DNSServiceRegister`, `DNSServiceBrowse`, `DNSServiceResolve`, `DNSServiceQueryRecord`, `DNSServiceRefSockFD`,
/// `DNSServiceProcessResult` and `DNSServiceRefDeallocate`.
package final class DNSServiceLibrary: Sendable {
    typealias RegisterReply =
        @convention(c) (
            OpaquePointer?, UInt32, Int32, UnsafePointer<CChar>?, UnsafePointer<CChar>?, UnsafePointer<CChar>?,
            UnsafeMutableRawPointer?
        ) -> Void
    typealias Register =
        @convention(c) (
            UnsafeMutablePointer<OpaquePointer?>?, UInt32, UInt32, UnsafePointer<CChar>?, UnsafePointer<CChar>?,
            UnsafePointer<CChar>?, UnsafePointer<CChar>?, UInt16, UInt16, UnsafeRawPointer?, RegisterReply?,
            UnsafeMutableRawPointer?
        ) -> Int32
    typealias BrowseReply =
        @convention(c) (
            OpaquePointer?, UInt32, UInt32, Int32, UnsafePointer<CChar>?, UnsafePointer<CChar>?,
            UnsafePointer<CChar>?, UnsafeMutableRawPointer?
        ) -> Void
    typealias Browse =
        @convention(c) (
            UnsafeMutablePointer<OpaquePointer?>?, UInt32, UInt32, UnsafePointer<CChar>?, UnsafePointer<CChar>?,
            BrowseReply?, UnsafeMutableRawPointer?
        ) -> Int32
    typealias ResolveReply =
        @convention(c) (
            OpaquePointer?, UInt32, UInt32, Int32, UnsafePointer<CChar>?, UnsafePointer<CChar>?, UInt16, UInt16,
            UnsafePointer<UInt8>?, UnsafeMutableRawPointer?
        ) -> Void
    typealias Resolve =
        @convention(c) (
            UnsafeMutablePointer<OpaquePointer?>?, UInt32, UInt32, UnsafePointer<CChar>?, UnsafePointer<CChar>?,
            UnsafePointer<CChar>?, ResolveReply?, UnsafeMutableRawPointer?
        ) -> Int32
    typealias QueryReply =
        @convention(c) (
            OpaquePointer?, UInt32, UInt32, Int32, UnsafePointer<CChar>?, UInt16, UInt16, UInt16, UnsafeRawPointer?,
            UInt32, UnsafeMutableRawPointer?
        ) -> Void
    typealias Query =
        @convention(c) (
            UnsafeMutablePointer<OpaquePointer?>?, UInt32, UInt32, UnsafePointer<CChar>?, UInt16, UInt16, QueryReply?,
            UnsafeMutableRawPointer?
        ) -> Int32
    typealias SocketOf = @convention(c) (OpaquePointer?) -> Int32
    typealias ProcessResult = @convention(c) (OpaquePointer?) -> Int32
    typealias Deallocate = @convention(c) (OpaquePointer?) -> Void

    /// `kDNSServiceFlagsMoreComing` and `kDNSServiceFlagsAdd` of `<dns_sd.h>`.
    static let moreComing: UInt32 = 0x1
    static let add: UInt32 = 0x2
    /// `kDNSServiceType_A` and `kDNSServiceClass_IN`.
    static let typeA: UInt16 = 1
    static let classIN: UInt16 = 1

    private let library: SharedLibrary
    let register: Register
    let browse: Browse
    let resolve: Resolve
    let query: Query
    let socket: SocketOf
    let processResult: ProcessResult
    let deallocate: Deallocate

    /// Where this platform keeps the DNS-SD calls, in the order to try.
    package static var candidates: [String] {
        #if canImport(Darwin)
            ["/usr/lib/system/libsystem_dnssd.dylib", "/usr/lib/libSystem.B.dylib"]
        #else
            ["libdns_sd.so.1", "libdns_sd.so"]
        #endif
    }

    /// The platform's library, loaded once; nil when it is not installed (or lacks a call).
    package static let shared: DNSServiceLibrary? = DNSServiceLibrary(candidates: candidates)

    /// What to install when ``shared`` is nil, for people.
    package static var installAdvice: String {
        #if canImport(Darwin)
            "this system has no DNS-SD library (libsystem_dnssd)"
        #else
            "install Avahi's DNS-SD library and daemon (Debian and Ubuntu: apt-get install libavahi-compat-libdnssd1 avahi-daemon)"
        #endif
    }

    init?(candidates: [String]) {
        // Avahi's library prints a warning about being a compatibility layer on every first call unless told not
        // to; its calls are the documented API, so the warning only alarms people.
        guard let library = SharedLibrary(firstOf: candidates, defaults: ["AVAHI_COMPAT_NOWARN": "1"]) else {
            return nil
        }
        func symbol<T>(_ name: String, as type: T.Type) -> T? {
            library.address(of: name).map { unsafeBitCast($0, to: type) }
        }
        guard let register = symbol("DNSServiceRegister", as: Register.self),
            let browse = symbol("DNSServiceBrowse", as: Browse.self),
            let resolve = symbol("DNSServiceResolve", as: Resolve.self),
            let query = symbol("DNSServiceQueryRecord", as: Query.self),
            let socket = symbol("DNSServiceRefSockFD", as: SocketOf.self),
            let processResult = symbol("DNSServiceProcessResult", as: ProcessResult.self),
            let deallocate = symbol("DNSServiceRefDeallocate", as: Deallocate.self)
        else { return nil }
        self.library = library
        self.register = register
        self.browse = browse
        self.resolve = resolve
        self.query = query
        self.socket = socket
        self.processResult = processResult
        self.deallocate = deallocate
    }

    /// Waits up to `milliseconds` for any of `descriptors` to be readable (`poll(2)`); the readable ones.
    static func readable(_ descriptors: [Int32], within milliseconds: Int32) -> Set<Int32> {
        var polled = descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        let count = poll(&polled, nfds_t(polled.count), max(0, milliseconds))
        guard count > 0 else { return [] }
        return Set(polled.filter { $0.revents != 0 }.map(\.fd))
    }
}

/// A DNS-SD call that failed: which, and the `DNSServiceErrorType` it returned.
package struct DNSServiceError: Error, Sendable, CustomStringConvertible {
    package let operation: String
    package let code: Int32

    /// Whether the daemon is missing or unreachable (`kDNSServiceErr_ServiceNotRunning`, or Avahi's
    /// `kDNSServiceErr_Unknown` when it cannot reach avahi-daemon over D-Bus).
    package var daemonUnreachable: Bool { code == -65563 || code == -65537 }

    package var description: String {
        if daemonUnreachable {
            #if canImport(Darwin)
                return "\(operation) failed: mDNSResponder did not answer (DNS-SD error \(code))"
            #else
                return
                    "\(operation) failed: avahi-daemon did not answer over D-Bus (DNS-SD error \(code)); start it (systemctl start avahi-daemon)"
            #endif
        }
        let names: [Int32: String] = [
            -65540: "bad parameter", -65548: "name conflict", -65549: "invalid", -65555: "no authentication",
            -65541: "not initialized", -65539: "no memory",
        ]
        return "\(operation) failed: \(names[code] ?? "DNS-SD error \(code)")"
    }
}
