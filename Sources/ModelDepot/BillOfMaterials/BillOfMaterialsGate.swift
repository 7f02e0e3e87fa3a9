import Synchronization

/// One bill of materials at a time for a server (the mirror, the web app): each hashes a whole model, so a client
/// asking for many at once would take the disk and a core from every download. Others are told to come back (429).
package final class BillOfMaterialsGate: Sendable {
    private let running = Mutex(false)

    package init() {}

    /// True when no other bill is being made; the caller then calls ``leave()`` when done.
    package func tryEnter() -> Bool {
        running.withLock { running in
            defer { running = true }
            return !running
        }
    }

    package func leave() { running.withLock { $0 = false } }
}
