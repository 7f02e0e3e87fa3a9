import Foundation
import ModelDepot
import ModelDepotPlatform
import ModelDepotTesting
import Testing

/// `ui` and `serve` stop when asked, as a service manager asks: SIGTERM or Ctrl-C drains within a bounded time
/// (event streams are told to end), and a second signal exits at once.
@Suite struct StopSignalTests {
    /// Reads what arrives on `client` until `text` has come (or nothing more does).
    static func read(_ client: LoopbackConnection, until text: String) async -> String {
        var received = ""
        while !received.contains(text), let more = await client.firstBytes() {
            received += String(decoding: more, as: UTF8.self)
        }
        return received
    }

    @Test(.timeLimit(.minutes(2))) func uiStopsOnSIGTERMWithEventStreamsOpenAndAClosedTab() async throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-ui-stop")
        defer { folder.remove() }
        try await PeerProcess.with(
            CLIRunner.executable, ["ui", "--port", "0", "--offline", "--cache-dir", folder.path("cache").path],
            in: folder.url, environment: ["HF_HOME": folder.path("home").path], log: folder.path("ui.log")
        ) { ui in
            let started = await waitUntil(timeout: .seconds(60)) { ui.output.contains("ModelDepot is at") }
            try #require(started, "\(ui.output)")
            let launch = try #require(
                ui.output.split(separator: "\n").first { $0.hasPrefix("ModelDepot is at") }?.split(separator: " ")
                    .last.flatMap { URL(string: String($0)) })
            let port = launch.port!
            let session = try await AsyncHTTPTransport.patient.send(TransportRequest(url: launch))
            for try await _ in session.body {}
            let cookie = try #require(session.header("Set-Cookie")?.split(separator: ";").first.map(String.init))
            func openStream() async throws -> LoopbackConnection {
                let client = try LoopbackConnection(port: port)
                client.transmit(
                    "GET /api/ui/events HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nCookie: \(cookie)\r\n\r\n")
                let opened = await Self.read(client, until: "event: update")
                #expect(opened.hasPrefix("HTTP/1.1 200"), "\(opened.prefix(200))")
                return client
            }
            // A tab that was closed (its stream's socket gone) and one still open.
            var closedTab: LoopbackConnection? = try await openStream()
            let openTab = try await openStream()
            closedTab = nil
            #expect(closedTab == nil)

            ui.send(SIGTERM)
            let told = await Self.read(openTab, until: "event: shutdown")
            #expect(told.contains("event: shutdown"), "the open tab is told the server is stopping")
            #expect(await waitUntil(timeout: .seconds(20)) { !ui.isRunning }, "ui still runs 20 s after SIGTERM")
            #expect(ui.exitCode == 0, "\(ui.output)")
        }
    }

    @Test(.timeLimit(.minutes(2))) func aSecondSignalEndsTheDrainAtOnce() async throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-second-signal")
        defer { folder.remove() }
        try FileManager.default.createDirectory(at: folder.path("repos/acme/tiny"), withIntermediateDirectories: true)
        try Data(SampleData.bytes(count: 12 << 20, seed: 78)).write(to: folder.path("repos/acme/tiny/model.bin"))
        let port = try unusedLoopbackPort()
        try await PeerProcess.with(
            CLIRunner.executable,
            ["serve", "--root", folder.path("repos").path, "--port", "\(port)", "--drain-timeout", "600"],
            in: folder.url, log: folder.path("serve.log")
        ) { server in
            #expect(await ServeDrainTests.listening(server))
            // A reader that never reads: the drain would wait for it for ten minutes.
            let client = try LoopbackConnection(port: port, receiveBuffer: 64 << 10)
            client.transmit("GET /acme/tiny/resolve/main/model.bin HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            try #require(await client.firstBytes() != nil, "the response is under way")
            server.send(SIGINT)
            #expect(await ServeDrainTests.refusing(port: port), "draining")
            #expect(server.isRunning, "the first Ctrl-C drains")
            server.send(SIGINT)
            #expect(await waitUntil(timeout: .seconds(20)) { !server.isRunning }, "a second Ctrl-C exits at once")
            #expect(server.exitCode == 130, "\(server.output)")
            #expect(server.output.contains("again: exiting now"), "\(server.output)")
        }
    }
}
