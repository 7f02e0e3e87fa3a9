import ModelDepotPlatform

/// Waiting on a bare connection's bytes, for tests (polled: the socket is non-blocking per receive).
extension LoopbackConnection {
    /// The first bytes to arrive (one receive); nil when nothing comes within 30 s.
    package func firstBytes() async -> [UInt8]? {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            guard let bytes = receive() else { return nil }
            if !bytes.isEmpty { return bytes }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return nil
    }

    /// Everything until the server closes its end; nil when it has not closed within 30 s.
    package func readToEnd() async -> [UInt8]? {
        var received: [UInt8] = []
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            guard let bytes = receive() else { return received }
            if bytes.isEmpty {
                try? await Task.sleep(for: .milliseconds(5))
            } else {
                received += bytes
            }
        }
        return nil
    }
}
