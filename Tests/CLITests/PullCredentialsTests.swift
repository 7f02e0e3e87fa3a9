import Foundation
import ModelDepotTesting
import Testing

/// Credentials on URL pulls: the Hub token goes to the endpoint's origin only, a password in the URL is sent
/// as HTTP Basic credentials and never printed.
@Suite struct PullCredentialsTests {
    @Test func theHubTokenGoesToTheEndpointOriginOnly() async throws {
        let bytes = SampleData.bytes(count: 50_000, seed: 21)
        let hub = try await FaultServer.start(files: ["/acme/tiny/resolve/main/w.bin": bytes])
        let elsewhere = try await FaultServer.start(files: ["/w.bin": bytes])
        let folder = try TemporaryDirectory()
        defer {
            folder.remove()
            Task {
                try? await hub.shutdown()
                try? await elsewhere.shutdown()
            }
        }
        let environment = ["HF_ENDPOINT": hub.baseURL.absoluteString, "HF_TOKEN": "hf_sessiontoken"]
        let onHub = try await CLIRunner.run(
            [
                "pull", hub.url("/acme/tiny/resolve/main/w.bin").absoluteString, "-o", folder.path("a.bin").path,
                "--quiet",
            ],
            environment: environment)
        #expect(onHub.status == 0, "\(onHub.stderr)")
        #expect(hub.requests.allSatisfy { $0.header("Authorization") == "Bearer hf_sessiontoken" })
        let other = try await CLIRunner.run(
            ["pull", elsewhere.url("/w.bin").absoluteString, "-o", folder.path("b.bin").path, "--quiet"],
            environment: environment)
        #expect(other.status == 0, "\(other.stderr)")
        #expect(elsewhere.requests.allSatisfy { $0.header("Authorization") == nil })

        // A refusal says which credentials went along.
        hub.inject(.status(401), times: 10)
        let refused = try await CLIRunner.run(
            ["pull", hub.url("/acme/tiny/resolve/main/w.bin").absoluteString, "-o", folder.path("c.bin").path],
            environment: environment)
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("A bearer token was sent."), "\(refused.stderr)")
        elsewhere.inject(.status(401), times: 10)
        let refusedElsewhere = try await CLIRunner.run(
            ["pull", elsewhere.url("/w.bin").absoluteString, "-o", folder.path("d.bin").path], environment: environment)
        #expect(refusedElsewhere.stderr.contains("No credentials were sent."), "\(refusedElsewhere.stderr)")
    }

    @Test func aPasswordInTheURLIsNeverPrinted() async throws {
        let server = try await FaultServer.start(files: [:])
        let folder = try TemporaryDirectory()
        defer {
            folder.remove()
            Task { try? await server.shutdown() }
        }
        let url = "http://user:s3cretPW@127.0.0.1:\(server.baseURL.port!)/missing.bin"
        let output = try await CLIRunner.run(["pull", url, "--json"], in: folder.url)
        #expect(output.status == 1)
        #expect(!output.stdout.contains("s3cretPW") && !output.stderr.contains("s3cretPW"))
        #expect(output.stdout.contains(#""event":"failed""#))
        #expect(
            server.requests.first?.header("Authorization") == "Basic "
                + Data("user:s3cretPW".utf8).base64EncodedString())
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path).isEmpty, "nothing left behind")
    }
}

/// `info` resolves a revision the way a pull does, with the same checks.
@Suite struct InfoCommandHostileHubTests {
    @Test func aCommitThatIsNotACommitIdIsRefused() async throws {
        let hostile = Array(#"{"id": "evil/repo", "sha": "../../../../etc"}"#.utf8)
        let server = try await FaultServer.start(files: ["/api/models/evil/repo/revision/main": hostile])
        let folder = try TemporaryDirectory()
        defer {
            folder.remove()
            Task { try? await server.shutdown() }
        }
        let output = try await CLIRunner.run([
            "info", "evil/repo", "--endpoint", server.baseURL.absoluteString, "--cache-dir", folder.path("cache").path,
        ])
        #expect(output.status == 1)
        #expect(output.stderr.contains("did not say which commit 'main'"), "\(output.stderr)")
        #expect(server.requests.allSatisfy { !$0.path.contains("tree") }, "nothing is listed at a hostile commit")
    }
}
