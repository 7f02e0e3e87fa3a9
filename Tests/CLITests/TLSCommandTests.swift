import Foundation
import ModelDepotTesting
import Testing

/// `serve` and `ui` with `--tls-cert FILE --tls-key FILE`, as a person runs them: https by HTTP/2 or HTTP/1.1, the
/// certificate read again on SIGHUP, the web app's cookie `Secure` and its same-site check on the https origin.
@Suite struct TLSCommandTests {
    typealias Answer = Curl.Answer

    static func curl(
        _ url: String, _ arguments: [String] = [], trusting authority: String, in folder: TemporaryDirectory
    ) async throws -> Answer? {
        try await Curl.fetch(url, arguments, trusting: authority, in: folder.url)
    }

    /// Copies `from`'s certificate and key over the ones the server reads.
    static func install(_ from: TestCertificates, into live: URL) throws {
        for name in ["server.pem", "server.key"] {
            let target = live.appendingPathComponent(name)
            try? FileManager.default.removeItem(at: target)
            try FileManager.default.copyItem(at: from.folder.appendingPathComponent(name), to: target)
        }
    }

    @Test(.timeLimit(.minutes(2))) func serveSpeaksHTTPSAndReadsARenewedCertificateOnSIGHUP() async throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-serve-tls")
        defer { folder.remove() }
        let weights = SampleData.bytes(count: 2 << 20, seed: 63)
        try folder.write(["acme/tiny/model.bin": weights], in: "repos")
        var made: [TestCertificates] = []
        for name in ["old", "new", "live"] {
            try FileManager.default.createDirectory(at: folder.path(name), withIntermediateDirectories: true)
            if name != "live" { made.append(try await TestCertificates.make(in: folder.path(name))) }
        }
        let (old, new, live) = (made[0], made[1], folder.path("live"))
        try Self.install(old, into: live)
        try await PeerProcess.with(
            CLIRunner.executable,
            [
                "serve", "--root", folder.path("repos").path, "--port", "0",
                "--tls-cert", live.appendingPathComponent("server.pem").path,
                "--tls-key", live.appendingPathComponent("server.key").path,
            ], in: folder.url, log: folder.path("serve.log")
        ) { serve in
            let listening = await waitUntil(timeout: .seconds(30)) { serve.output.contains("listening on https://") }
            try #require(listening, "\(serve.output)")
            let line = try #require(serve.output.split(separator: "\n").first { $0.hasPrefix("listening on https://") })
            let base = try #require(line.split(separator: " ").first { $0.hasPrefix("https://") }.map(String.init))
            let file = base + "/acme/tiny/resolve/main/model.bin"
            let first = try #require(try await Self.curl(file, trusting: old.authority, in: folder))
            #expect(first.status == 200 && first.version == "2" && first.body == Data(weights))

            try Self.install(new, into: live)
            serve.send(SIGHUP)
            let reread = await waitUntil(timeout: .seconds(30)) { serve.output.contains("TLS certificate read again") }
            try #require(reread, "\(serve.output)")
            let renewed = try #require(try await Self.curl(file, trusting: new.authority, in: folder))
            #expect(renewed.status == 200 && renewed.body == Data(weights))
            #expect(try await Self.curl(file, trusting: old.authority, in: folder) == nil, "the old certificate")

            // A renewal that cannot be read keeps the certificate in use, and the server keeps serving.
            try Data("not a key\n".utf8).write(to: live.appendingPathComponent("server.key"))
            serve.send(SIGHUP)
            let refused = await waitUntil(timeout: .seconds(30)) { serve.output.contains("could not be read again") }
            try #require(refused, "\(serve.output)")
            #expect(try await Self.curl(file, trusting: new.authority, in: folder)?.status == 200)
            #expect(await serve.terminate(), "\(serve.output)")
        }
    }

    /// The mirror's dashboard over https: its sign-in cookie is `Secure`, and a change from the http origin is
    /// another site's.
    @Test(.timeLimit(.minutes(2))) func theDashboardOverHTTPSSetsASecureCookieAndRefusesTheHTTPOrigin() async throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-dashboard-tls")
        defer { folder.remove() }
        try FileManager.default.createDirectory(at: folder.path("repos"), withIntermediateDirectories: true)
        try Data("reader-token\n".utf8).write(to: folder.path("token"))
        let certificates = try await TestCertificates.make(in: folder.url)
        try await PeerProcess.with(
            CLIRunner.executable,
            [
                "serve", "--root", folder.path("repos").path, "--port", "0", "--ui", "--token-file",
                folder.path("token").path, "--tls-cert", certificates.certificate, "--tls-key", certificates.key,
            ], in: folder.url, log: folder.path("serve.log")
        ) { serve in
            let listening = await waitUntil(timeout: .seconds(30)) { serve.output.contains("listening on https://") }
            try #require(listening, "\(serve.output)")
            let line = try #require(serve.output.split(separator: "\n").first { $0.hasPrefix("listening on https://") })
            let base = try #require(line.split(separator: " ").first { $0.hasPrefix("https://") }.map(String.init))
            let port = try #require(URL(string: base)?.port)
            func signIn(origin: String) async throws -> Answer {
                try #require(
                    try await Self.curl(
                        base + "/ui/api/session",
                        [
                            "-X", "POST", "-H", "Origin: \(origin)", "-H", "Content-Type: application/json", "--data",
                            #"{"token": "reader-token"}"#,
                        ], trusting: certificates.authority, in: folder))
            }
            let refused = try await signIn(origin: "http://127.0.0.1:\(port)")
            #expect(refused.status == 403, "\(refused.status)")
            let signedIn = try await signIn(origin: "https://127.0.0.1:\(port)")
            #expect(signedIn.status == 200, "\(signedIn.status)")
            let cookie = signedIn.headers.split(separator: "\r\n").first { $0.lowercased().hasPrefix("set-cookie:") }
            #expect(cookie?.contains("; Secure") == true, "\(cookie ?? "no cookie")")
            #expect(await serve.terminate(), "\(serve.output)")
        }
    }

    @Test func serveRefusesHalfATLSPairAndAFileThatIsNoCertificate() async throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-serve-tls-bad")
        defer { folder.remove() }
        try FileManager.default.createDirectory(at: folder.path("repos"), withIntermediateDirectories: true)
        let half = try await CLIRunner.run(["serve", "--root", folder.path("repos").path, "--tls-cert", "/x.pem"])
        #expect(half.status == 64 && half.stderr.contains("--tls-cert and --tls-key go together"), "\(half.stderr)")
        try Data("hello\n".utf8).write(to: folder.path("cert.pem"))
        let wrong = try await CLIRunner.run([
            "ui", "--port", "0", "--offline", "--cache-dir", folder.path("cache").path,
            "--tls-cert", folder.path("cert.pem").path, "--tls-key", folder.path("cert.pem").path,
        ])
        #expect(wrong.status != 0 && wrong.stderr.contains("holds no PEM certificate"), "\(wrong.stderr)")
    }

    @Test(.timeLimit(.minutes(2))) func uiOverHTTPSSetsASecureCookieAndRefusesTheHTTPOrigin() async throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-ui-tls")
        defer { folder.remove() }
        let certificates = try await TestCertificates.make(in: folder.url)
        try await PeerProcess.with(
            CLIRunner.executable,
            [
                "ui", "--port", "0", "--offline", "--cache-dir", folder.path("cache").path,
                "--tls-cert", certificates.certificate, "--tls-key", certificates.key,
            ], in: folder.url, environment: ["HF_HOME": folder.path("home").path], log: folder.path("ui.log")
        ) { ui in
            let started = await waitUntil(timeout: .seconds(60)) { ui.output.contains("ModelDepot is at") }
            try #require(started, "\(ui.output)")
            let launch = try #require(
                ui.output.split(separator: "\n").first { $0.hasPrefix("ModelDepot is at") }?.split(separator: " ")
                    .last.map(String.init))
            #expect(launch.hasPrefix("https://127.0.0.1:"), "\(launch)")
            let port = try #require(URL(string: launch)?.port)
            let session = try #require(try await Self.curl(launch, trusting: certificates.authority, in: folder))
            #expect(session.version == "2")
            let cookieLine = try #require(
                session.headers.split(separator: "\r\n").first { $0.lowercased().hasPrefix("set-cookie:") })
            #expect(cookieLine.contains("; Secure"), "\(cookieLine)")
            let cookie = try #require(cookieLine.split(separator: ":", maxSplits: 1).last?.split(separator: ";").first)
                .trimmingCharacters(in: .whitespaces)

            let page = try #require(
                try await Self.curl(
                    "https://127.0.0.1:\(port)/models", ["-H", "Cookie: \(cookie)"], trusting: certificates.authority,
                    in: folder))
            #expect(page.status == 200, "\(page.headers)")
            // A change from the http origin is another site's; from the https page it gets past the guard.
            let change = "https://127.0.0.1:\(port)/api/ui/models/no-such-model/pause"
            for (origin, refused) in [("http://127.0.0.1:\(port)", true), ("https://127.0.0.1:\(port)", false)] {
                let answer = try #require(
                    try await Self.curl(
                        change,
                        [
                            "-X", "POST", "-H", "Cookie: \(cookie)", "-H", "Origin: \(origin)", "-H",
                            "Content-Type: application/json", "--data", "{}",
                        ], trusting: certificates.authority, in: folder))
                #expect((answer.status == 403) == refused, "Origin \(origin): \(answer.status)")
            }
            #expect(await ui.terminate(), "\(ui.output)")
        }
    }
}
