import Foundation
import Synchronization

/// The client addresses a mirror has answered, with how many requests and when last, for its dashboard. Kept
/// to the most recently seen ``capacity`` addresses, so a scan from many addresses cannot grow it without end.
final class MirrorClients: Sendable {
    struct Client: Sendable, Equatable {
        var requests: Int
        var lastSeen: Date
    }

    let capacity: Int
    private let clients = Mutex<[String: Client]>([:])

    init(capacity: Int = 1000) { self.capacity = max(1, capacity) }

    func saw(_ address: String, at now: Date = Date()) {
        clients.withLock { clients in
            clients[address, default: Client(requests: 0, lastSeen: now)].requests += 1
            clients[address]?.lastSeen = now
            if clients.count > capacity, let oldest = clients.min(by: { $0.value.lastSeen < $1.value.lastSeen }) {
                clients[oldest.key] = nil
            }
        }
    }

    var all: [String: Client] { clients.withLock { $0 } }
}
