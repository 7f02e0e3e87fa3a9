import Foundation
import HummingbirdCore
import Logging
import ModelDepotPlatform

/// Limits the connections the mirror serves at once. At the limit Hummingbird stops reading from the listening
/// socket, so new clients wait in the kernel's accept queue instead of the server spinning on `accept`
/// failing with EMFILE; the limit is logged once each time it is reached.
struct ConnectionCap: AvailableConnectionsDelegate {
    let limit: Int
    let logger: Logger
    private var open = 0
    private var warned = false

    init(limit: Int, logger: Logger) {
        self.limit = max(1, limit)
        self.logger = logger
    }

    /// `requested`, lowered so that every connection can hold a second descriptor (the file it streams) with
    /// room to spare under the soft `RLIMIT_NOFILE`.
    static func limit(requested: Int) -> Int {
        guard let descriptors = OpenFileLimit.current() else { return requested }
        return max(1, min(requested, (descriptors - 64) / 2))
    }

    mutating func connectionOpened() {
        open += 1
        if open >= limit, !warned {
            warned = true
            logger.warning(
                "serving \(open) connections, the most allowed: new clients wait until one closes (raise the limit, and the descriptor limit with ulimit -n)"
            )
        }
    }

    mutating func connectionClosed() {
        open -= 1
        if open < limit * 9 / 10 { warned = false }
    }

    func isAcceptingNewConnections() -> Bool { open < limit }
}

extension Duration {
    var wholeNanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
