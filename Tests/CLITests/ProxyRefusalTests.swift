import Foundation
import ModelDepot
import ModelDepotTesting
import Testing

/// With every proxy variable pointing at a proxy that refuses everything, every outbound path of the command line
/// fails with the proxy's error, and the server behind it is never reached directly: nothing bypasses the proxy by
/// accident.
@Suite struct ProxyRefusalTests {
    @Test func everyOutboundPathGoesThroughTheProxy() async throws {
        let proxy = try await RawReplyServer.start(
            reply: Array("HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8))
        // Stands for the Hub and every other server: it must never see a connection.
        let server = try await RawReplyServer.start(reply: Array("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n".utf8))
        let folder = try TemporaryDirectory(prefix: "modeldepot-proxy-refusal")
        defer {
            folder.remove()
            Task {
                try? await proxy.shutdown()
                try? await server.shutdown()
            }
        }
        var environment = ["HF_HUB_CACHE": folder.path("cache").path, "HF_TOKEN": "hf_neverseen"]
        for name in ["https_proxy", "http_proxy", "all_proxy"] {
            environment[name] = proxy.baseURL.absoluteString
            environment[name.uppercased()] = proxy.baseURL.absoluteString
        }
        environment["no_proxy"] = ""
        environment["NO_PROXY"] = ""
        let hub = server.baseURL.absoluteString
        let commands: [[String]] = [
            ["pull", "acme/tiny", "--endpoint", hub],
            ["pull", hub + "/files/model.bin", "--output", folder.path("model.bin").path],
            ["search", "tiny", "--endpoint", hub],
            ["info", "acme/tiny", "--endpoint", hub],
            ["chat", "--endpoint", hub + "/v1", "--model", "m", "--prompt", "hello"],
        ]
        for arguments in commands {
            let result = try await CLIRunner.run(arguments, environment: environment)
            #expect(result.status != 0, "\(arguments): \(result.stdout)")
            #expect(result.stderr.contains("proxy"), "\(arguments): \(result.stderr)")
            #expect(!result.stderr.contains("hf_neverseen"))
        }
        // A pull-through mirror's upstream: the client asks the mirror directly, the mirror asks through the proxy.
        let (process, out, err) = try CLIRunner.start(
            ["serve", "--upstream", hub, "--cache-dir", folder.path("mirror-cache").path, "--port", "0"],
            environment: environment)
        let line = await CLIRunner.read(out, until: "\n")
        let base = try #require(line.split(separator: "\n").first.map { String($0.dropFirst("listening on ".count)) })
        let reply = try await AsyncHTTPTransport.patient.send(
            TransportRequest(url: URL(string: base + "/api/models/acme/tiny")!))
        var body: [UInt8] = []
        for try await chunk in reply.body { body += chunk.bytes }
        #expect(reply.status == 502 && String(decoding: body, as: UTF8.self).contains("proxy"), "\(reply.status)")
        process.terminate()
        _ = await CLIRunner.wait(process, out, err)
        #expect(!FileManager.default.fileExists(atPath: folder.path("model.bin").path))
        #expect(server.acceptedConnections == 0, "a request went around the proxy")
        #expect(proxy.acceptedConnections >= commands.count)
    }

    @Test func aProxyVariableThisClientCannotUseIsRefusedByName() async throws {
        let result = try await CLIRunner.run(
            ["search", "tiny", "--endpoint", "http://127.0.0.1:9"],
            environment: ["HTTPS_PROXY": "", "https_proxy": "", "ALL_PROXY": "socks5h://user:hunter2@127.0.0.1:1080"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("ALL_PROXY") && result.stderr.contains("SOCKS"), "\(result.stderr)")
        #expect(!result.stderr.contains("hunter2"))
        let flag = try await CLIRunner.run([
            "search", "tiny", "--endpoint", "http://127.0.0.1:9", "--proxy", "https://p:1",
        ])
        #expect(
            flag.status == 1 && flag.stderr.contains("--proxy") && flag.stderr.contains("https://"), "\(flag.stderr)")
    }

    @Test func envShowsTheRouteOfEachHostWithoutTheToken() async throws {
        let result = try await CLIRunner.run(
            ["env", "--json", "--endpoint", "https://huggingface.co", "--mirror", "http://10.1.2.3:8080"],
            environment: [
                "https_proxy": "http://user:pw@proxy.corp:3128", "http_proxy": "", "HTTP_PROXY": "", "all_proxy": "",
                "ALL_PROXY": "", "no_proxy": "10.0.0.0/8,cdn-lfs.huggingface.co", "HF_TOKEN": "hf_secretvalue",
                "SSL_CERT_FILE": "/etc/hostname",
            ])
        #expect(result.status == 0, "\(result.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let network = try #require(report["network"] as? [String: Any])
        let routes = try #require(network["routes"] as? [[String: String]])
        let proxyOf = Dictionary(routes.map { ($0["url"]!, $0["proxy"]!) }, uniquingKeysWith: { a, _ in a })
        #expect(proxyOf["https://huggingface.co"] == "http://***@proxy.corp:3128")
        #expect(proxyOf["https://cdn-lfs.huggingface.co"] == "direct")
        #expect(proxyOf["https://cas-bridge.xethub.hf.co"] == "http://***@proxy.corp:3128")
        #expect(proxyOf["http://10.1.2.3:8080"] == "direct")
        #expect(((report["hub"] as? [String: Any])?["token"] as? String) == "from HF_TOKEN")
        #expect((network["certificateAuthorities"] as? [String])?.contains { $0.contains("SSL_CERT_FILE") } == true)
        #expect(!result.stdout.contains("hf_secretvalue") && !result.stdout.contains("pw@"))
        let missing = try await CLIRunner.run(["env"], environment: ["SSL_CERT_FILE": "/nonexistent/ca.pem"])
        #expect(missing.status == 1 && missing.stderr.contains("SSL_CERT_FILE"), "\(missing.stderr)")
    }
}
