import Foundation
import NIOCore
import Synchronization

/// The client addresses a mirror has answered, with how many requests and when last, for its dashboard. Kept
/// to the most recently seen ``capacity`` addresses, so a scan from many addresses cannot grow it without end.
///
/// Counted on every request, so an address is compared by its bytes and written out only when the dashboard
/// asks: formatting it and updating a table keyed by the text cost a small answer three `malloc`s (issue 63).
final class MirrorClients: Sendable {
    struct Client: Sendable, Equatable {
        var requests: Int
        var lastSeen: Date
    }

    /// A client's address without its port, compared by its bytes.
    struct Address: Hashable, Sendable {
        private let high: UInt64
        private let low: UInt64
        /// 4 for IPv4, 6 for IPv6, 0 for anything else (a Unix socket, or no address).
        private let family: UInt8

        init(_ address: SocketAddress?) {
            switch address {
            case .v4(let v4):
                high = 0
                low = UInt64(withUnsafeBytes(of: v4.address.sin_addr) { $0.loadUnaligned(as: UInt32.self) })
                family = 4
            case .v6(let v6):
                (high, low) = withUnsafeBytes(of: v6.address.sin6_addr) {
                    ($0.loadUnaligned(as: UInt64.self), $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
                }
                family = 6
            case .unixDomainSocket, nil:
                (high, low, family) = (0, 0, 0)
            }
        }
    }

    /// A table entry: the address as first seen (for its text), and its counts.
    private struct Entry {
        let address: SocketAddress?
        var client: Client
    }

    let capacity: Int
    private let clients = Mutex<[Address: Entry]>([:])

    init(capacity: Int = 1000) { self.capacity = max(1, capacity) }

    func saw(_ address: SocketAddress?, at now: Date = Date()) {
        let key = Address(address)
        clients.withLock { clients in
            if let index = clients.index(forKey: key) {
                clients.values[index].client.requests += 1
                clients.values[index].client.lastSeen = now
                return
            }
            // The one just seen stays, even if the clock stepped back.
            if clients.count >= capacity,
                let oldest = clients.min(by: { $0.value.client.lastSeen < $1.value.client.lastSeen })
            {
                clients[oldest.key] = nil
            }
            clients[key] = Entry(address: address, client: Client(requests: 1, lastSeen: now))
        }
    }

    /// Every client by its address as text (`127.0.0.1`, `::1`; `unknown` for one without an IP address). Two
    /// entries never share a text: the same text is the same address bytes.
    var all: [String: Client] {
        let entries = clients.withLock { Array($0.values) }
        return Dictionary(entries.map { ($0.address?.ipAddress ?? "unknown", $0.client) }) { first, _ in first }
    }
}
