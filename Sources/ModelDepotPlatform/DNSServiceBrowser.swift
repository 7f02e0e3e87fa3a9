import Foundation

/// A service instance found with DNS-SD: browsed (`DNSServiceBrowse`), resolved to a host, port and TXT record
/// (`DNSServiceResolve`), and the host's IPv4 addresses asked (`DNSServiceQueryRecord` for its A records).
///
/// Everything in it came from the network, from anyone on the link: the caller checks it as hostile.
package struct DNSServiceInstance: Sendable, Hashable {
    /// The instance name, as announced ("ModelDepot on rack-3").
    package var name: String
    /// The host name its SRV record gives ("rack-3.local.").
    package var host: String
    package var port: UInt16
    /// The TXT record's bytes (RFC 6763 §6).
    package var text: [UInt8]
    /// The host's IPv4 addresses, dotted.
    package var addresses: [String]
    /// The interface it was seen on (`if_nametoindex` numbering).
    package var interface: UInt32

    package init(name: String, host: String, port: UInt16, text: [UInt8], addresses: [String], interface: UInt32) {
        self.name = name
        self.host = host
        self.port = port
        self.text = text
        self.addresses = addresses
        self.interface = interface
    }
}

/// Browses for a DNS-SD service type and resolves what answers, within a deadline.
///
/// ``find(_:library:within:settle:)`` blocks its thread on `poll(2)` and the daemon's socket: call it from a
/// thread of its own (the library's `BlockingWork`), never from Swift's cooperative pool.
package enum DNSServiceBrowser {
    /// The most instances one browse resolves.
    package static let maximumInstances = 32

    /// The instances of `type` that resolved to an address: browsing stops `settle` after the first one resolved
    /// (so several mirrors answering together are all seen) or at `within`, whichever comes first.
    ///
    /// - Throws: `DNSServiceError` when the daemon refuses the browse (unreachable).
    package static func find(
        _ type: String, library: DNSServiceLibrary, within: Duration, settle: Duration = .milliseconds(300)
    ) throws -> [DNSServiceInstance] {
        let session = BrowseSession(library: library)
        defer { session.close() }
        try session.start(type)
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: within)
        while clock.now < deadline {
            var until = deadline
            if let first = session.firstResolved { until = min(until, first.advanced(by: settle)) }
            let left = clock.now.duration(to: until)
            guard left > .zero else { break }
            // At most a second per wait, so a long `within` never overflows poll's Int32 milliseconds.
            let milliseconds = min(
                1000, left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000)
            session.pump(milliseconds: Int32(milliseconds) + 1)
        }
        return session.instances.values.filter { !$0.addresses.isEmpty }.sorted { $0.name < $1.name }
    }
}

/// One browse's state, on the thread that runs ``DNSServiceBrowser/find(_:library:within:settle:)``: the C
/// callbacks (run inside `DNSServiceProcessResult` on that thread) record what they were told; `pump` starts the
/// next step for it.
private final class BrowseSession {
    let library: DNSServiceLibrary
    /// Every open reference, each with the instance it is resolving or asking addresses for (nil: the browse).
    var references: [(reference: OpaquePointer, instance: String?)] = []
    var instances: [String: DNSServiceInstance] = [:]
    /// Browse answers waiting to be resolved: name, type, domain, interface.
    var found: [(String, String, String, UInt32)] = []
    /// Resolved instances waiting for their addresses to be asked.
    var resolved: [String] = []
    var firstResolved: ContinuousClock.Instant?
    /// The contexts handed to the C calls, kept alive as long as the session.
    var contexts: [Context] = []

    final class Context {
        unowned let session: BrowseSession
        let instance: String?
        init(_ session: BrowseSession, _ instance: String?) {
            self.session = session
            self.instance = instance
        }
    }

    init(library: DNSServiceLibrary) { self.library = library }

    func context(_ instance: String?) -> UnsafeMutableRawPointer {
        let context = Context(self, instance)
        contexts.append(context)
        return Unmanaged.passUnretained(context).toOpaque()
    }

    static func session(_ raw: UnsafeMutableRawPointer?) -> Context? {
        raw.map { Unmanaged<Context>.fromOpaque($0).takeUnretainedValue() }
    }

    func start(_ type: String) throws {
        var reference: OpaquePointer?
        let status = library.browse(
            &reference, 0, 0, type, nil,
            { _, flags, interface, error, name, type, domain, raw in
                guard error == 0, flags & DNSServiceLibrary.add != 0, let context = BrowseSession.session(raw),
                    let name, let type, let domain
                else { return }
                context.session.found.append(
                    (String(cString: name), String(cString: type), String(cString: domain), interface))
            }, context(nil))
        guard status == 0, let reference else { throw DNSServiceError(operation: "DNSServiceBrowse", code: status) }
        references.append((reference, nil))
    }

    /// Waits up to `milliseconds` for the daemon, hands what it sent to the callbacks, then starts the next steps.
    func pump(milliseconds: Int32) {
        let sockets = references.map { library.socket($0.reference) }
        let ready = DNSServiceLibrary.readable(sockets, within: milliseconds)
        var failed: [OpaquePointer] = []
        for (index, entry) in references.enumerated() where ready.contains(sockets[index]) {
            if library.processResult(entry.reference) != 0 { failed.append(entry.reference) }
        }
        for reference in failed { drop(reference) }
        // Anyone on the link can answer: at most `maximumInstances` are followed, so a flood of announcements costs
        // a bounded number of resolves and descriptors.
        for (name, type, domain, interface) in found
        where instances[name] == nil && instances.count < DNSServiceBrowser.maximumInstances {
            instances[name] = DNSServiceInstance(
                name: name, host: "", port: 0, text: [], addresses: [], interface: interface)
            var reference: OpaquePointer?
            let status = library.resolve(
                &reference, 0, interface, name, type, domain,
                { _, _, _, error, _, host, port, length, text, raw in
                    guard error == 0, let context = BrowseSession.session(raw), let name = context.instance,
                        let host
                    else { return }
                    let session = context.session
                    guard var instance = session.instances[name], instance.host.isEmpty else { return }
                    instance.host = String(cString: host)
                    instance.port = UInt16(bigEndian: port)
                    instance.text = text.map { Array(UnsafeBufferPointer(start: $0, count: Int(length))) } ?? []
                    session.instances[name] = instance
                    session.resolved.append(name)
                }, context(name))
            if status == 0, let reference { references.append((reference, name)) }
        }
        found.removeAll()
        for name in resolved {
            guard let instance = instances[name] else { continue }
            // Resolved: its resolve is done with.
            for entry in references where entry.instance == name { drop(entry.reference) }
            var reference: OpaquePointer?
            let status = library.query(
                &reference, 0, instance.interface, instance.host, DNSServiceLibrary.typeA, DNSServiceLibrary.classIN,
                { _, flags, _, error, _, type, _, length, data, _, raw in
                    guard error == 0, flags & DNSServiceLibrary.add != 0, type == DNSServiceLibrary.typeA,
                        length == 4, let data, let context = BrowseSession.session(raw), let name = context.instance
                    else { return }
                    let octets = UnsafeRawBufferPointer(start: data, count: 4)
                    let address = octets.map(String.init).joined(separator: ".")
                    let session = context.session
                    guard session.instances[name]?.addresses.contains(address) == false else { return }
                    session.instances[name]?.addresses.append(address)
                    if session.firstResolved == nil { session.firstResolved = ContinuousClock().now }
                }, context(name))
            if status == 0, let reference { references.append((reference, name)) }
        }
        resolved.removeAll()
    }

    func drop(_ reference: OpaquePointer) {
        guard let index = references.firstIndex(where: { $0.reference == reference }) else { return }
        library.deallocate(reference)
        references.remove(at: index)
    }

    func close() {
        for entry in references { library.deallocate(entry.reference) }
        references.removeAll()
    }
}
