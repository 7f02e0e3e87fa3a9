import Foundation
import ModelDepot
import ModelDepotTesting
import Testing

@Suite struct ServeCommandTests {
    @Test func servePrintsItsURLAnswersAndStopsOnSIGTERM() async throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        let file = root.path("acme/tiny/config.json")
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data("{}".utf8).write(to: file)
        let (process, out, err) = try CLIRunner.start(["serve", "--root", root.url.path, "--port", "0"])
        // The first line on stdout names the address.
        let line = await CLIRunner.read(out, until: "\n")
        let base = try #require(line.split(separator: "\n").first.map { String($0) })
        #expect(base.hasPrefix("listening on http://127.0.0.1:"))
        let url = URL(string: String(base.dropFirst("listening on ".count)) + "/acme/tiny/resolve/main/config.json")!
        let response = try await AsyncHTTPTransport.patient.send(TransportRequest(url: url))
        var body: [UInt8] = []
        for try await buffer in response.body { body += buffer.bytes }
        #expect(response.status == 200 && body == Array("{}".utf8))
        kill(process.processIdentifier, SIGTERM)
        let finished = await CLIRunner.wait(process, out, err)
        #expect(finished.status == 0, "\(finished.stderr)")
        #expect(
            finished.stderr.contains("GET /acme/tiny/resolve/main/config.json 200"), "one access-log line per request")
    }

    @Test func serveRefusesAMissingRoot() async throws {
        let output = try await CLIRunner.run(["serve", "--root", "/nonexistent/models"])
        #expect(output.status == 64)
        #expect(output.stderr.contains("--root /nonexistent/models is not a folder"))
    }

    @Test func faultsAreAnnouncedOnTheStartupLineAndBadSpecsRefused() async throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        try FileManager.default.createDirectory(at: root.path("acme/tiny"), withIntermediateDirectories: true)
        let (process, out, err) = try CLIRunner.start([
            "serve", "--root", root.url.path, "--port", "0", "--faults", "reset=0.05,rate=4MB",
        ])
        let line = await CLIRunner.read(out, until: "\n")
        #expect(line.contains("(injecting faults on purpose: reset=0.05,rate=4194304B/s)"), "\(line)")
        kill(process.processIdentifier, SIGTERM)
        _ = await CLIRunner.wait(process, out, err)

        let refused = try await CLIRunner.run(["serve", "--root", root.url.path, "--faults", "reset=often"])
        #expect(refused.status == 64)
        #expect(refused.stderr.contains("Invalid fault 'reset=often'"), "\(refused.stderr)")
    }
}
