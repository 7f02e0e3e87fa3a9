import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A service announced on the local network with DNS-SD (`DNSServiceRegister`) for as long as the value is kept
/// and not stopped: the daemon (mDNSResponder, avahi-daemon) answers browsers for it and withdraws it (a goodbye
/// packet) when it is deallocated, or when this process dies.
///
/// The daemon's replies (the name it settled on after a conflict, a failure) come through a socket that a thread of
/// its own reads, never a thread of Swift's cooperative pool: `DNSServiceProcessResult` blocks.
package final class DNSServiceRegistration: @unchecked Sendable {
    // @unchecked: `reference` is touched by the reading thread only, `state` under `lock`.
    private let library: DNSServiceLibrary
    private var reference: OpaquePointer?
    private let wake: (read: Int32, write: Int32)
    private let lock = NSLock()
    private var state = State()
    private let finished = DispatchSemaphore(value: 0)

    private struct State {
        var name: String?
        var failure: DNSServiceError?
        var stopped = false
    }

    /// The instance name the daemon registered (it appends " (2)" and so on after a conflict), once it said so.
    package var registeredName: String? { lock.withLock { state.name } }
    /// The failure the daemon reported after registering, or the loss of the connection to it, if any.
    package var failure: DNSServiceError? { lock.withLock { state.failure } }

    /// Announces `name` of `type` (`_hf-mirror._tcp`) on `port` with the TXT record `text` (RFC 6763 §6 bytes), on
    /// every interface, in the default domain (`local.`).
    ///
    /// - Throws: `DNSServiceError` when the daemon refuses at once (unreachable, a bad name).
    package init(
        library: DNSServiceLibrary, name: String, type: String, port: UInt16, text: [UInt8]
    ) throws {
        self.library = library
        // A TXT record is at most 65535 bytes (its length is a UInt16 on the wire); -65540 is kDNSServiceErr_BadParam.
        guard text.count <= Int(UInt16.max) else {
            throw DNSServiceError(operation: "DNSServiceRegister", code: -65540)
        }
        var pipeEnds: [Int32] = [0, 0]
        guard pipe(&pipeEnds) == 0 else { throw DNSServiceError(operation: "DNSServiceRegister", code: -65539) }
        wake = (pipeEnds[0], pipeEnds[1])
        var created: OpaquePointer?
        let context = Unmanaged.passUnretained(self).toOpaque()
        let status = text.withUnsafeBytes { bytes in
            library.register(
                &created, 0, 0, name, type, nil, nil, port.bigEndian, UInt16(text.count), bytes.baseAddress,
                { _, _, error, name, _, _, context in
                    guard let context else { return }
                    let registration = Unmanaged<DNSServiceRegistration>.fromOpaque(context).takeUnretainedValue()
                    registration.lock.withLock {
                        if error == 0 {
                            registration.state.name = name.map { String(cString: $0) }
                        } else {
                            registration.state.failure = DNSServiceError(operation: "DNSServiceRegister", code: error)
                        }
                    }
                }, context)
        }
        // The pipe is closed by deinit, which runs for a throwing init once every property is set.
        guard status == 0, let created else { throw DNSServiceError(operation: "DNSServiceRegister", code: status) }
        reference = created
        let thread = Thread { [self] in readReplies() }
        thread.name = "ModelDepot.dns-sd"
        thread.start()
    }

    /// Reads the daemon's replies until ``stop()``, then withdraws the service; the only thread that touches
    /// `reference`.
    private func readReplies() {
        guard let reference else { return }
        let socket = library.socket(reference)
        while true {
            let ready = DNSServiceLibrary.readable([socket, wake.read], within: 1000)
            if ready.contains(wake.read) || lock.withLock({ state.stopped }) { break }
            guard ready.contains(socket) else { continue }
            let code = library.processResult(reference)
            if code != 0 {
                // The daemon went away (restarted, say): the announcement is gone, and `failure` says so.
                lock.withLock { state.failure = DNSServiceError(operation: "DNSServiceProcessResult", code: code) }
                break
            }
        }
        library.deallocate(reference)
        self.reference = nil
        finished.signal()
    }

    /// Withdraws the service and waits (briefly) until it is gone. Idempotent. Until it is called the service stays
    /// announced (the reading thread keeps this value alive), until the process ends.
    package func stop() {
        let first = lock.withLock {
            defer { state.stopped = true }
            return !state.stopped
        }
        guard first else { return }
        var byte: UInt8 = 1
        _ = write(wake.write, &byte, 1)
        _ = finished.wait(timeout: .now() + 2)
    }

    deinit {
        // The reading thread holds this value until it ends, so it has ended here: the pipe is no one's.
        close(wake.read)
        close(wake.write)
    }
}
