import Foundation
import NIOCore
import Testing

@testable import ModelDepotServer

/// The dashboard's table of clients: counted by address without the port, written out as text only when read,
/// and kept to its capacity.
@Suite struct MirrorClientsTests {
    @Test func clientsAreCountedByAddressWithoutThePort() throws {
        let clients = MirrorClients()
        let start = Date(timeIntervalSince1970: 1_000)
        clients.saw(try SocketAddress(ipAddress: "127.0.0.1", port: 50_000), at: start)
        clients.saw(try SocketAddress(ipAddress: "127.0.0.1", port: 50_001), at: start + 1)
        clients.saw(try SocketAddress(ipAddress: "10.0.0.7", port: 50_000), at: start + 2)
        clients.saw(try SocketAddress(ipAddress: "::1", port: 50_000), at: start + 3)
        clients.saw(try SocketAddress(ipAddress: "fe80::1:2", port: 1), at: start + 4)
        clients.saw(try SocketAddress(ipAddress: "fe80::1:3", port: 1), at: start + 5)
        clients.saw(try SocketAddress(unixDomainSocketPath: "/tmp/modeldepot-test.sock"), at: start + 6)
        clients.saw(nil, at: start + 7)
        let all = clients.all
        #expect(all["127.0.0.1"] == MirrorClients.Client(requests: 2, lastSeen: start + 1))
        #expect(all["10.0.0.7"]?.requests == 1)
        #expect(all["::1"]?.requests == 1)
        #expect(all["fe80::1:2"]?.requests == 1)
        #expect(all["fe80::1:3"]?.requests == 1)
        #expect(all["unknown"] == MirrorClients.Client(requests: 2, lastSeen: start + 7))
        #expect(all.count == 6)
    }

    @Test func theLeastRecentlySeenClientMakesRoomPastTheCapacity() throws {
        let clients = MirrorClients(capacity: 2)
        let start = Date(timeIntervalSince1970: 1_000)
        clients.saw(try SocketAddress(ipAddress: "10.0.0.1", port: 1), at: start)
        clients.saw(try SocketAddress(ipAddress: "10.0.0.2", port: 1), at: start + 1)
        clients.saw(try SocketAddress(ipAddress: "10.0.0.1", port: 1), at: start + 2)
        clients.saw(try SocketAddress(ipAddress: "10.0.0.3", port: 1), at: start + 3)
        #expect(Set(clients.all.keys) == ["10.0.0.1", "10.0.0.3"])
        #expect(clients.all["10.0.0.1"]?.requests == 2)
    }
}
