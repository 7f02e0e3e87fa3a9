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

    /// For service managers: every flag from MODELDEPOT_SERVE_<NAME> or a --config file; the command line wins,
    /// then the environment, then the file, and a wrong setting is named where it came from.
    @Test func settingsComeFromTheEnvironmentAndAFile() async throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        try FileManager.default.createDirectory(at: root.path("repos/acme/tiny"), withIntermediateDirectories: true)
        try Data("{}".utf8).write(to: root.path("repos/acme/tiny/config.json"))
        let settings = root.path("serve.conf")
        try Data(
            """
            # the mirror of the lab
            root = "\(root.path("repos").path)"
            allowed-host = models.example
            port = 1
            ui = false
            """.utf8
        ).write(to: settings)
        let environment = [
            "MODELDEPOT_SERVE_PORT": "0", "MODELDEPOT_SERVE_ALLOWED_HOST": "gpu-box, lab.example",
            "MODELDEPOT_SERVE_CONFIG": settings.path,
        ]
        let (process, out, err) = try CLIRunner.start(["serve", "--idle-timeout", "5"], environment: environment)
        let line = await CLIRunner.read(out, until: "\n")
        let base = try #require(line.split(separator: "\n").first.map { String($0.dropFirst("listening on ".count)) })
        #expect(base.hasPrefix("http://127.0.0.1:") && !base.hasSuffix(":1"), "the environment's port won: \(line)")
        func status(host: String) async throws -> Int {
            try await AsyncHTTPTransport.patient.send(
                TransportRequest(url: URL(string: base + "/api/models")!, headers: [("Host", host)])
            ).status
        }
        // The environment's names replace the file's (the environment wins for the whole option).
        #expect(try await status(host: "gpu-box") == 200)
        #expect(try await status(host: "lab.example") == 200)
        #expect(try await status(host: "models.example") == 421)
        kill(process.processIdentifier, SIGTERM)
        _ = await CLIRunner.wait(process, out, err)

        let badSwitch = try await CLIRunner.run(
            ["serve", "--root", root.url.path], environment: ["MODELDEPOT_SERVE_CACHE": "maybe"])
        #expect(badSwitch.status == 64 && badSwitch.stderr.contains("MODELDEPOT_SERVE_CACHE: --cache is true or false"))
        try Data("root /srv\n".utf8).write(to: settings)
        let badLine = try await CLIRunner.run(["serve", "--config", settings.path])
        #expect(badLine.status == 64 && badLine.stderr.contains("serve.conf, line 1 is not 'name = value'"))
        let unknown = try await CLIRunner.run(
            ["serve", "--root", root.url.path], environment: ["MODELDEPOT_SERVE_COLOUR": "blue"])
        #expect(unknown.status == 64 && unknown.stderr.contains("--colour"), "\(unknown.stderr)")
    }

    /// The switches the settings treat as true/false are exactly serve's flags without a value.
    @Test func theSettingsKnowWhichFlagsTakeNoValue() async throws {
        let dump = try await CLIRunner.run(["serve", "--experimental-dump-help"])
        let tool = try #require(try JSONSerialization.jsonObject(with: Data(dump.stdout.utf8)) as? [String: Any])
        let command = try #require(tool["command"] as? [String: Any])
        let arguments = try #require(command["arguments"] as? [[String: Any]])
        let switches = arguments.filter { $0["kind"] as? String == "flag" }.compactMap {
            ($0["preferredName"] as? [String: Any])?["name"] as? String
        }
        #expect(
            Set(switches).subtracting(["help", "version"]) == [
                "cache", "ui", "no-sendfile", "finish-abandoned-pulls", "xet", "xet-uploads", "advertise",
            ])
    }
}
