import Foundation
import ModelDepot
import ModelDepotPlatform
import ModelDepotTesting
import Testing

/// `modeldepot serve` stops gracefully on SIGTERM: the download in flight finishes whole, new connections are
/// refused at once, and the process exits 0 after the last response.
@Suite struct ServeDrainTests {
    static func listening(_ server: PeerProcess) async -> Bool {
        // The whole line: its port may arrive in a later read than its start.
        await waitUntil(timeout: .seconds(30)) {
            server.output.range(of: "listening on").map { server.output[$0.upperBound...].contains("\n") } == true
        }
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

    /// Seconds the stop may wait in these tests; the process must be gone `cutOffSlack` after that.
    static let drainSeconds = 2
    static let cutOffSlack: Duration = .seconds(2)

    static func created(_ file: URL) -> URL {
        _ = FileManager.default.createFile(atPath: file.path, contents: nil)
        return file
    }

    /// Sends SIGTERM and returns how long the process took to exit, or nil if it was still running well past the
    /// drain and its slack (it is then killed).
    static func stopTimed(_ server: PeerProcess) async -> Duration? {
        let clock = ContinuousClock()
        let start = clock.now
        server.send(SIGTERM)
        let ended = await waitUntil(timeout: .seconds(drainSeconds) + cutOffSlack + .seconds(10)) { !server.isRunning }
        return ended ? clock.now - start : nil
    }

    /// A client reading at 100 kB/s with a small receive buffer (plain or TLS): it says `started` once the body
    /// begins, reads at full speed once the file `hurry` exists (the server is gone; what the kernels still hold
    /// arrives at once), and ends with `received N of LENGTH`.
    static let slowReader = """
        import os, socket, ssl, sys, time
        port, path, ca, hurry = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
        s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536); s.connect(("127.0.0.1", port))
        if ca: s = ssl.create_default_context(cafile=ca).wrap_socket(s, server_hostname="127.0.0.1")
        s.sendall(("GET %s HTTP/1.1\\r\\nHost: 127.0.0.1:%d\\r\\n\\r\\n" % (path, port)).encode())
        got = b""
        while b"\\r\\n\\r\\n" not in got: got += s.recv(65536)
        head, body = got.split(b"\\r\\n\\r\\n", 1)
        length = [int(l.split(b":")[1]) for l in head.split(b"\\r\\n") if l.lower().startswith(b"content-length:")][0]
        print("started", head.split(b"\\r\\n")[0].decode(), flush=True)
        received = len(body)
        try:
            while True:
                chunk = s.recv(16384)
                if not chunk: break
                received += len(chunk)
                if not os.path.exists(hurry): time.sleep(len(chunk) / 100000)
        except (OSError, ssl.SSLError) as error:
            print("ended by", type(error).__name__, flush=True)
        print("received", received, "of", length, flush=True)
        """

    /// A client reading a 64 MiB file at 100 kB/s holds the response far past any drain: at the drain timeout its
    /// connection is closed, the client gets fewer bytes than the `Content-Length`, and the server exits 0 within
    /// two seconds — over plain HTTP (the file goes out by `sendfile`) and over TLS.
    @Test(.timeLimit(.minutes(2)), arguments: [false, true])
    func aSlowReaderIsCutOffAtTheDrainTimeoutAndTheServerExits(overTLS: Bool) async throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-drain-slow")
        defer { folder.remove() }
        try FileManager.default.createDirectory(at: folder.path("repos/acme/big"), withIntermediateDirectories: true)
        // Its content does not matter here: a sparse file, made at once.
        let big = try FileHandle(forWritingTo: Self.created(folder.path("repos/acme/big/model.bin")))
        try big.truncate(atOffset: 64 << 20)
        try big.close()
        var arguments = [
            "serve", "--root", folder.path("repos").path, "--port", "0", "--drain-timeout", "\(Self.drainSeconds)",
        ]
        var authority = ""
        if overTLS {
            let certificates = try await TestCertificates.make(in: folder.url)
            arguments += ["--tls-cert", certificates.certificate, "--tls-key", certificates.key]
            authority = certificates.authority
        }
        try await PeerProcess.with(CLIRunner.executable, arguments, in: folder.url, log: folder.path("serve.log")) {
            server in
            #expect(await Self.listening(server))
            let port = try #require(
                server.output.split(separator: "\n").first { $0.hasPrefix("listening on ") }?.split(separator: ":")
                    .last.flatMap { Int($0) })
            let hurry = folder.path("hurry")
            try await PeerProcess.with(
                URL(fileURLWithPath: "/usr/bin/python3"),
                ["-c", Self.slowReader, "\(port)", "/acme/big/resolve/main/model.bin", authority, hurry.path],
                in: folder.url, log: folder.path("client.log")
            ) { client in
                // Waits for the whole line: the log file can be read between its pieces.
                let started = await waitUntil(timeout: .seconds(30)) {
                    client.output.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
                        .contains { $0.hasPrefix("started ") }
                }
                try #require(started, "the download is under way: \(client.output) \(server.output)")
                #expect(client.output.contains("started HTTP/1.1 200 "), "\(client.output)")
                let took = await Self.stopTimed(server)
                #expect(
                    took.map { $0 <= .seconds(Self.drainSeconds) + Self.cutOffSlack } == true,
                    "stopped after \(took.map { "\($0)" } ?? "never"): \(server.output)")
                #expect(server.exitCode == 0, "\(server.output)")
                #expect(server.output.contains("drain timeout reached: closed 1 connection"), "\(server.output)")
                // The cut-off itself ended the connection (a TLS one without waiting for its close_notify to go
                // out behind the unread body), not the last-resort exit that skips the rest of the stop.
                #expect(!server.output.contains("the stop did not end"), "\(server.output)")
                _ = FileManager.default.createFile(atPath: hurry.path, contents: nil)
                // A whole line again: the numbers can arrive after the word.
                let ended = await waitUntil(timeout: .seconds(60)) {
                    client.output.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
                        .contains { $0.hasPrefix("received ") }
                }
                try #require(ended, "\(client.output)")
                let report = try #require(client.output.split(separator: "\n").last { $0.hasPrefix("received ") })
                let numbers = report.split(separator: " ").compactMap { Int($0) }
                #expect(numbers.count == 2 && numbers[0] < numbers[1], "the client sees a body cut short: \(report)")
                #expect(numbers.last == 64 << 20, "\(report)")
            }
        }
    }

    /// A pull-through whose upstream accepted the request and never answers: the stop does not wait for the
    /// upstream's timeouts.
    @Test(.timeLimit(.minutes(2))) func aPullThroughWaitingOnAStuckUpstreamDoesNotHoldTheStop() async throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-drain-stuck")
        defer { folder.remove() }
        // Accepts every connection, reads the request, says which, and never answers.
        let silent = """
            import socket, threading
            s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(64)
            print(s.getsockname()[1], flush=True)
            held = []
            while True:
                c, _ = s.accept(); held.append(c)
                print("request", c.recv(65536).split(b"\\r\\n")[0].decode(), flush=True)
            """
        try await PeerProcess.with(
            URL(fileURLWithPath: "/usr/bin/python3"), ["-c", silent], in: folder.url, log: folder.path("upstream.log")
        ) { upstream in
            let port = try #require(await upstream.firstLine().flatMap { Int($0) }, "\(upstream.output)")
            try await PeerProcess.with(
                CLIRunner.executable,
                [
                    "serve", "--upstream", "http://127.0.0.1:\(port)", "--cache-dir", folder.path("cache").path,
                    "--port", "0", "--drain-timeout", "\(Self.drainSeconds)",
                ], in: folder.url, log: folder.path("serve.log")
            ) { server in
                #expect(await Self.listening(server))
                let base = try #require(
                    server.output.split(separator: "\n").first { $0.hasPrefix("listening on ") }?
                        .dropFirst("listening on ".count))
                try await PeerProcess.with(
                    URL(fileURLWithPath: "/usr/bin/curl"),
                    ["-s", "-o", "/dev/null", "-w", "%{http_code}\n", "\(base)/acme/big/resolve/main/model.bin"],
                    in: folder.url, log: folder.path("curl.log")
                ) { curl in
                    let asked = await waitUntil(timeout: .seconds(30)) { upstream.output.contains("request ") }
                    try #require(asked, "the mirror asked its upstream: \(server.output)")
                    let took = await Self.stopTimed(server)
                    #expect(
                        took.map { $0 <= .seconds(Self.drainSeconds) + Self.cutOffSlack } == true,
                        "stopped after \(took.map { "\($0)" } ?? "never"): \(server.output)")
                    #expect(server.exitCode == 0, "\(server.output)")
                    _ = await curl.waitForExit()
                    #expect(!curl.output.hasPrefix("200"), "no whole answer from a stuck upstream: \(curl.output)")
                }
            }
        }
    }
}
