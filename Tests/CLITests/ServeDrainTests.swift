import Foundation
import ModelDepot
import ModelDepotPlatform
import ModelDepotTesting
import Testing

/// `modeldepot serve` stops gracefully on SIGTERM: the download in flight finishes whole, new connections are
/// refused at once, and the process exits 0 after the last response.
@Suite struct ServeDrainTests {
    static func listening(_ server: PeerProcess) async -> Bool {
        await waitUntil(timeout: .seconds(30)) { server.output.contains("listening on") }
    }

    static func refusing(port: Int) async -> Bool {
        await waitUntil(timeout: .seconds(30)) { LoopbackConnection.refuses(port: port) }
    }

    @Test(.timeLimit(.minutes(2))) func sigtermDrainsInFlightResponsesRefusesNewConnectionsAndExits() async throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-drain")
        defer { folder.remove() }
        let weights = SampleData.bytes(count: 12 << 20, seed: 77)
        try FileManager.default.createDirectory(at: folder.path("repos/acme/tiny"), withIntermediateDirectories: true)
        try Data(weights).write(to: folder.path("repos/acme/tiny/model.bin"))
        let port = try unusedLoopbackPort()
        try await PeerProcess.with(
            CLIRunner.executable, ["serve", "--root", folder.path("repos").path, "--port", "\(port)"],
            in: folder.url, log: folder.path("serve.log")
        ) { server in
            #expect(await Self.listening(server))
            // A client that reads slowly (a small receive buffer it leaves unread): the response cannot be
            // written to its end while the signal is handled.
            let client = try LoopbackConnection(port: port, receiveBuffer: 64 << 10)
            client.transmit("GET /acme/tiny/resolve/main/model.bin HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            let started = await client.firstBytes()
            try #require(started != nil, "the response is under way")
            let first = started ?? []

            server.send(SIGTERM)
            #expect(await Self.refusing(port: port), "new connections are refused while draining")
            #expect(server.isRunning, "the server waits for the response in flight")

            let rest = await client.readToEnd()
            try #require(rest != nil, "the server closed the connection after the response")
            let received = first + (rest ?? [])
            let head = try #require(received.firstRange(of: Array("\r\n\r\n".utf8)))
            #expect(String(decoding: received[..<head.lowerBound], as: UTF8.self).hasPrefix("HTTP/1.1 200"))
            #expect(Array(received[head.upperBound...]) == weights, "the download in flight finished whole")
            #expect(await server.waitForExit(), "exit status 0 after draining: \(server.output)")
            #expect(server.output.contains("draining"), "\(server.output)")
        }
    }
}
