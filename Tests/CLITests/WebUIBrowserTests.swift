import Foundation
import ModelDepot
import ModelDepotTesting
import Testing

/// `modeldepot ui` in a real headless Chromium driven by Selenium (Tests/PythonPeers/ui_driver.py): browse and
/// filter, a model's page, a rate-capped download from `serve --faults` that recovers a reset and pauses and
/// resumes with a bar that never goes back, cancel, a failure and Retry, a damaged model and Repair, the
/// onboarding flow, and the refusals (another site, no cookie, a used link, a foreign Host). Screenshots of
/// every screen go to `.build/ui-screenshots/app/`.
/// Serialized: each test runs a Chromium (and one a llama.cpp server); on two cores, running them side by side
/// starves the rest of the suite.
@Suite(.serialized) struct WebUIBrowserTests {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let python = packageRoot.appendingPathComponent(".venv-browser/bin/python")

    static let repos: [String: [UInt8]] = [
        "acme/big/weights.bin": SampleData.bytes(count: 6 << 20, seed: 41),
        "acme/big/config.json": Array(#"{"a": 1}"#.utf8),
        "acme/cancel/weights.bin": SampleData.bytes(count: 6 << 20, seed: 42),
        "acme/small/small.txt": Array("small model\n".utf8),
        "acme/broken/weights.bin": SampleData.bytes(count: 256 << 10, seed: 43),
    ]

    static func entry(
        _ name: String, _ repo: String, _ files: [String], size: Int, capability: String, description: String
    ) -> [String: Any] {
        [
            "name": name, "repo": repo, "files": files, "required": [files[0]], "format": "pytorch",
            "capabilities": [capability], "sizeBytes": size, "description": description,
        ]
    }

    static var catalog: [String: Any] {
        [
            "version": 1,
            "models": [
                entry(
                    "ui-big", "acme/big", ["weights.bin", "config.json"], size: (6 << 20) + 8,
                    capability: "textGeneration",
                    description: "A rate-capped model"),
                entry(
                    "ui-cancel", "acme/cancel", ["weights.bin"], size: 6 << 20, capability: "textGeneration",
                    description: "Cancel me"),
                entry(
                    "ui-small", "acme/small", ["small.txt"], size: 12, capability: "transcription",
                    description: "For onboarding"),
                entry(
                    "ui-broken", "acme/broken", ["weights.bin"], size: 256 << 10, capability: "embeddings",
                    description: "Damaged on disk"),
                entry(
                    "ui-ghost", "acme/ghost", ["ghost.txt"], size: 4, capability: "embeddings",
                    description: "Not on the mirror at first"),
            ],
            "presets": ["ui-set": ["ui-small", "ui-big"]],
        ]
    }

    /// `ui --demo` needs no network: its embedded Hub serves a model in each state the screens show, and
    /// stopping it removes what it generated.
    @Test func theDemoHasAModelInEveryState() async throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-ui-demo-test")
        defer { folder.remove() }
        let ui = try PeerProcess(
            CLIRunner.executable, ["ui", "--demo"], in: folder.url,
            environment: ["HF_HOME": folder.path("home").path, "HF_HUB_OFFLINE": "0"], log: folder.path("ui.log"))
        let started = await waitUntil(timeout: .seconds(60)) { ui.output.contains("ModelDepot is at") }
        let output = ui.output
        try #require(started, "\(output)")
        let launch = try #require(
            output.split(separator: "\n").first { $0.hasPrefix("ModelDepot is at") }?.split(separator: " ").last
                .flatMap { URL(string: String($0)) })
        let base = "http://127.0.0.1:\(launch.port!)"
        let session = try await AsyncHTTPTransport.patient.send(TransportRequest(url: launch))
        for try await _ in session.body {}
        let cookie = try #require(session.header("Set-Cookie")?.split(separator: ";").first.map(String.init))
        let answer = try await AsyncHTTPTransport.patient.send(
            TransportRequest(url: URL(string: base + "/api/ui/models")!, headers: [("Cookie", cookie)]))
        var body: [UInt8] = []
        for try await part in answer.body { body += part.bytes }
        let rows = try #require(
            (try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])?["rows"] as? [[String: Any]])
        let kinds = Dictionary(
            uniqueKeysWithValues: rows.compactMap { row -> (String, String)? in
                guard let name = row["name"] as? String,
                    let kind = ((row["status"] as? [String: Any])?["badge"] as? [String: Any])?["kind"] as? String
                else { return nil }
                return (name, kind)
            })
        #expect(
            kinds == [
                "demo-chat": "notDownloaded", "demo-llama": "notDownloaded", "demo-embed": "ready",
                "demo-huge": "ready", "demo-damaged": "corrupt", "demo-voice": "notDownloaded",
            ])
        // With nothing installed, the demo's sentence encoder runs in ui itself: Use → Embeddings works offline.
        func post(_ path: String, _ body: String) async throws -> (Int, [String: Any]) {
            let reply = try await AsyncHTTPTransport.patient.send(
                TransportRequest(
                    method: "POST", url: URL(string: base + path)!,
                    headers: [("Cookie", cookie), ("Content-Type", "application/json"), ("Origin", base)],
                    body: Array(body.utf8)))
            var bytes: [UInt8] = []
            for try await part in reply.body { bytes += part.bytes }
            return (reply.status, (try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any]) ?? [:])
        }
        let (status, compared) = try await post(
            "/api/ui/embeddings", #"{"sentences": ["a cat sits", "a cat sits", "markets fell"], "model": "demo-embed"}"#
        )
        #expect(status == 200 && compared["dimensions"] as? Int == 32, "\(compared)")
        // A model too big for this machine is refused with its estimate, and a code the page offers to override.
        let (refusedStatus, refusal) = try await post("/api/ui/models/demo-huge/load", "{}")
        #expect(refusedStatus == 409 && refusal["code"] as? String == "insufficientMemory", "\(refusal)")
        #expect((refusal["error"] as? String)?.contains("needs about") == true)
        // The download is slow enough to watch: the demo's bandwidth limit, shown in Settings and liftable there.
        let settings = try await AsyncHTTPTransport.patient.send(
            TransportRequest(url: URL(string: base + "/api/ui/settings")!, headers: [("Cookie", cookie)]))
        var settingsBody: [UInt8] = []
        for try await part in settings.body { settingsBody += part.bytes }
        let settingsJSON = try #require(try JSONSerialization.jsonObject(with: Data(settingsBody)) as? [String: Any])
        #expect((settingsJSON["bandwidthBytesPerSecond"] as? NSNumber)?.intValue == 4 << 20, "\(settingsJSON)")
        let demoLine = try #require(output.split(separator: "\n").first { $0.hasPrefix("demo Hub at") }, "\(output)")
        let cachePath = try #require(demoLine.components(separatedBy: "; cache ").last)
        let workspace = URL(fileURLWithPath: cachePath).deletingLastPathComponent()
        #expect(FileManager.default.fileExists(atPath: workspace.path))
        #expect(await ui.terminate(), "\(ui.output)")
        #expect(!FileManager.default.fileExists(atPath: workspace.path), "the demo cleans up after itself")
    }

    @Test func theScreensWorkInChromium() async throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: Self.python.path)
                && FileManager.default.isExecutableFile(atPath: "/usr/bin/chromedriver"),
            "needs chromium, chromium-driver and .venv-browser (scripts/test installs them)")
        let folder = try TemporaryDirectory(prefix: "modeldepot-ui-browser")
        defer { folder.remove() }
        for (path, bytes) in Self.repos {
            let url = folder.path("repos/" + path)
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(bytes).write(to: url)
        }
        let catalogFile = folder.path("catalog.json")
        try JSONSerialization.data(withJSONObject: Self.catalog).write(to: catalogFile)
        let environment = ["HF_HOME": folder.path("home").path, "MODELDEPOT_MIRRORS": ""]

        // The Hub: our mirror, each file body capped at 1 MB/s (time to pause mid-way even on a busy machine), the
        // first one reset mid-way.
        let port = try unusedLoopbackPort()
        try await PeerProcess.with(
            CLIRunner.executable,
            ["serve", "--root", folder.path("repos").path, "--port", "\(port)", "--faults", "rate=1MB,reset=1x"],
            in: folder.url, environment: environment, log: folder.path("serve.log")
        ) { mirror in
            let endpoint = "http://127.0.0.1:\(port)"
            let listening = await waitUntil(timeout: .seconds(30)) { mirror.output.contains("listening on") }
            try #require(listening, "serve did not start: \(mirror.output)")
            let hub = ["--endpoint", endpoint, "--cache-dir", folder.path("cache").path, "--catalog", catalogFile.path]

            // A model already here, then damaged: its blob loses its second half.
            let pulled = try await CLIRunner.run(["pull", "ui-broken", "--quiet"] + hub, environment: environment)
            try #require(pulled.status == 0, "\(pulled.stderr)")
            let blobs = folder.path("cache/models--acme--broken/blobs")
            let blob = try #require(try FileManager.default.contentsOfDirectory(atPath: blobs.path).first)
            let handle = try FileHandle(forWritingTo: blobs.appendingPathComponent(blob))
            try handle.truncate(atOffset: 128 << 10)
            try handle.close()

            try await PeerProcess.with(
                CLIRunner.executable, ["ui", "--port", "0"] + hub, in: folder.url, environment: environment,
                log: folder.path("ui.log")
            ) { ui in
                let line = await ui.firstLine()
                let launch = try #require(
                    line?.split(separator: " ").last.map(String.init).flatMap(URL.init(string:)),
                    "ui did not start: \(ui.output)")
                let screenshots = Self.packageRoot.appendingPathComponent(".build/ui-screenshots/app")
                try await PeerProcess.with(
                    Self.python,
                    [
                        Self.packageRoot.appendingPathComponent("Tests/PythonPeers/ui_driver.py").path,
                        launch.absoluteString, folder.path("repos").path, screenshots.path,
                    ], in: folder.url, environment: ["MIRROR_URL": endpoint, "CACHE_DIR": folder.path("cache").path],
                    log: folder.path("driver.log")
                ) { driver in
                    let (result, said) = try await Self.driverResult(driver, besides: ui, flows: 11)
                    // axe-core ran in every state a flow reached and on every page light/dark, wide/phone.
                    let audits = try #require(result["axe"] as? [String: [String]], "\(said)")
                    #expect(audits.count >= 40, "\(audits.keys.sorted())")
                    for (state, violations) in audits.sorted(by: { $0.key < $1.key }) {
                        #expect(violations.isEmpty, "axe in \(state): \(violations)")
                    }
                    // The download went through a connection reset on purpose, and recovered.
                    let answer = try await AsyncHTTPTransport.patient.send(
                        TransportRequest(url: URL(string: endpoint + "/metrics")!))
                    var metrics = ""
                    for try await part in answer.body {
                        metrics += String(decoding: part.bytes, as: UTF8.self)
                    }
                    #expect(metrics.contains(#"modeldepot_faults_injected_total{kind="reset"} 1"#), "\(metrics)")
                }
            }
        }
    }
}

/// `serve --ui`'s dashboard in Chromium (Tests/PythonPeers/mirror_driver.py): a pull-through mirror behind a
/// token in front of a rate-capped upstream; read-only with the mirror's token, a pull in flight with its bar,
/// counters that move, then pin and evict as the admin; axe-core in every state, light and dark, wide and phone.
extension WebUIBrowserTests {
    @Test func theDashboardWorksInChromium() async throws {
        let python = WebUIBrowserTests.python
        try #require(
            FileManager.default.isExecutableFile(atPath: python.path)
                && FileManager.default.isExecutableFile(atPath: "/usr/bin/chromedriver"),
            "needs chromium, chromium-driver and .venv-browser (scripts/test installs them)")
        let folder = try TemporaryDirectory(prefix: "modeldepot-dashboard-browser")
        defer { folder.remove() }
        try FileManager.default.createDirectory(at: folder.path("repos/acme/big"), withIntermediateDirectories: true)
        try Data(SampleData.bytes(count: 4 << 20, seed: 78)).write(to: folder.path("repos/acme/big/weights.bin"))
        try FileManager.default.createDirectory(at: folder.path("cache"), withIntermediateDirectories: true)
        try Data("reader-token\n".utf8).write(to: folder.path("read.token"))
        try Data("admin-token\n".utf8).write(to: folder.path("admin.token"))
        let upstreamPort = try unusedLoopbackPort()
        try await PeerProcess.with(
            CLIRunner.executable,
            ["serve", "--root", folder.path("repos").path, "--port", "\(upstreamPort)", "--faults", "rate=1MB"],
            in: folder.url, environment: [:], log: folder.path("upstream.log")
        ) { upstream in
            try #require(await waitUntil(timeout: .seconds(30)) { upstream.output.contains("listening on") })
            let port = try unusedLoopbackPort()
            try await PeerProcess.with(
                CLIRunner.executable,
                [
                    "serve", "--upstream", "http://127.0.0.1:\(upstreamPort)", "--cache-dir", folder.path("cache").path,
                    "--port", "\(port)", "--token-file", folder.path("read.token").path, "--ui",
                    "--admin-token-file", folder.path("admin.token").path,
                ], in: folder.url, environment: [:], log: folder.path("mirror.log")
            ) { mirror in
                try #require(
                    await waitUntil(timeout: .seconds(30)) { mirror.output.contains("dashboard at") },
                    "\(mirror.output)")
                let base = "http://127.0.0.1:\(port)"
                try await PeerProcess.with(
                    python,
                    [
                        WebUIBrowserTests.packageRoot.appendingPathComponent("Tests/PythonPeers/mirror_driver.py").path,
                        base + "/ui",
                        WebUIBrowserTests.packageRoot.appendingPathComponent(".build/ui-screenshots/mirror").path,
                    ], in: folder.url,
                    environment: [
                        "READ_TOKEN": "reader-token", "ADMIN_TOKEN": "admin-token",
                        "FILE_URL": base + "/acme/big/resolve/main/weights.bin",
                    ], log: folder.path("driver.log")
                ) { driver in
                    let (result, said) = try await Self.driverResult(driver, besides: mirror, flows: 4)
                    let audits = try #require(result["axe"] as? [String: [String]], "\(said)")
                    #expect(audits.count == 11, "\(audits.keys.sorted())")
                    for (state, violations) in audits.sorted(by: { $0.key < $1.key }) {
                        #expect(violations.isEmpty, "axe in \(state): \(violations)")
                    }
                }
            }
        }
    }
}

/// `ui --chat-local` in Chromium (Tests/PythonPeers/playground_driver.py) against the real llama.cpp server
/// `scripts/test` installs, with a tiny GGUF model pulled from our mirror: a reply streams to its token limit
/// with its usage, Stop ends a long one and the next still works, and identical sentences are the most alike;
/// axe-core in every state, light/dark, wide/phone.
extension WebUIBrowserTests {
    @Test func thePlaygroundsWorkInChromium() async throws {
        let python = WebUIBrowserTests.python
        try #require(
            FileManager.default.isExecutableFile(atPath: python.path)
                && FileManager.default.isExecutableFile(atPath: "/usr/bin/chromedriver") && PythonVenv.hasLlamaServer,
            "needs chromium, chromium-driver, .venv-browser and llama-cpp-python in .venv (scripts/test installs them)")
        let folder = try TemporaryDirectory(prefix: "modeldepot-playground-browser")
        defer { folder.remove() }
        let model = folder.path("repos/modeldepot/tiny-chat-GGUF/tiny-chat.gguf")
        try FileManager.default.createDirectory(
            at: model.deletingLastPathComponent(), withIntermediateDirectories: true)
        let writer = try CLIRunner.startProgram(
            PythonVenv.python,
            [PythonVenv.packageRoot.appendingPathComponent("Tests/PythonPeers/write_chat_model.py").path, model.path])
        #expect(await CLIRunner.wait(writer.0, writer.1, writer.2).status == 0)
        let catalog = folder.path("catalog.json")
        try Data(
            #"{"version":1,"models":[{"name":"tiny-chat","repo":"modeldepot/tiny-chat-GGUF","files":["tiny-chat.gguf"],"format":"gguf","capabilities":["textGeneration","embeddings"],"contextLength":2048,"sizeBytes":700000,"description":"tiny"}]}"#
                .utf8
        ).write(to: catalog)
        let port = try unusedLoopbackPort()
        try await PeerProcess.with(
            CLIRunner.executable, ["serve", "--root", folder.path("repos").path, "--port", "\(port)"], in: folder.url,
            environment: [:], log: folder.path("serve.log")
        ) { mirror in
            try #require(await waitUntil(timeout: .seconds(30)) { mirror.output.contains("listening on") })
            let common = ["--cache-dir", folder.path("cache").path, "--catalog", catalog.path]
            let pulled = try await CLIRunner.run(
                ["pull", "tiny-chat", "--quiet", "--endpoint", "http://127.0.0.1:\(port)"] + common)
            try #require(pulled.status == 0, "\(pulled.stderr)")
            try await PeerProcess.with(
                CLIRunner.executable, ["ui", "--port", "0", "--chat-local", "tiny-chat", "--offline"] + common,
                in: folder.url, environment: ["MODELDEPOT_PYTHON": PythonVenv.python.path], log: folder.path("ui.log")
            ) { ui in
                let started = await waitUntil(timeout: .seconds(120)) { ui.output.contains("ModelDepot is at") }
                try #require(started, "ui did not start: \(ui.output)")
                let launch = try #require(
                    ui.output.split(separator: "\n").first { $0.hasPrefix("ModelDepot is at") }?.split(separator: " ")
                        .last.map(String.init))
                try await Self.drive(
                    "playground_driver.py", [launch], screenshots: "playgrounds", in: folder, ui: ui, flows: 4,
                    audits: 14)
            }
        }
    }
}

extension WebUIBrowserTests {
    /// The Transcribe screen in Chromium over `ui --transcribe-local`: faster-whisper-server running tiny.en,
    /// pulled by its catalog name from our mirror.
    @Test func theTranscribeScreenWorksInChromium() async throws {
        let python = WebUIBrowserTests.python
        try #require(
            FileManager.default.isExecutableFile(atPath: python.path)
                && FileManager.default.isExecutableFile(atPath: "/usr/bin/chromedriver") && WhisperVenv.isInstalled,
            "needs chromium, chromium-driver, .venv-browser and .venv-whisper (scripts/test installs them)")
        let folder = try TemporaryDirectory(prefix: "modeldepot-transcribe-browser")
        defer { folder.remove() }
        let cache = try await WhisperVenv.pullTinyEn(into: folder)
        let speech = try await WhisperVenv.speak("The juice of lemons makes fine punch.", into: folder)
        let notAudio = folder.path("notes.wav")
        try Data("these are notes, not audio\n".utf8).write(to: notAudio)
        try await PeerProcess.with(
            CLIRunner.executable,
            ["ui", "--port", "0", "--transcribe-local", "whisper-tiny-en-ct2", "--offline"] + cache,
            in: folder.url, environment: WhisperVenv.environment,
            log: folder.path("ui.log")
        ) { ui in
            let started = await waitUntil(timeout: .seconds(120)) { ui.output.contains("ModelDepot is at") }
            try #require(started, "ui did not start: \(ui.output)")
            let launch = try #require(
                ui.output.split(separator: "\n").first { $0.hasPrefix("ModelDepot is at") }?.split(separator: " ")
                    .last.map(String.init))
            try await Self.drive(
                "transcribe_driver.py", [launch], screenshots: "transcribe",
                extra: [speech.appendingPathComponent("speech.m4a").path, notAudio.path], in: folder, ui: ui, flows: 3,
                audits: 7)
        }
    }
}

extension WebUIBrowserTests {
    /// Runs a browser driver (`Tests/PythonPeers/NAME`) against a running `ui`, its screenshots into
    /// `.build/ui-screenshots/SCREENSHOTS`, and holds its report: every flow ok, `flows` of them, `audits` axe runs
    /// with no serious or critical violation.
    static func drive(
        _ script: String, _ arguments: [String], screenshots: String, extra: [String] = [],
        in folder: TemporaryDirectory, ui: PeerProcess, flows expectedFlows: Int, audits expectedAudits: Int
    ) async throws {
        try await PeerProcess.with(
            python,
            [packageRoot.appendingPathComponent("Tests/PythonPeers/\(script)").path] + arguments
                + [packageRoot.appendingPathComponent(".build/ui-screenshots/\(screenshots)").path] + extra,
            in: folder.url, environment: [:], log: folder.path("driver.log")
        ) { driver in
            let (result, said) = try await Self.driverResult(driver, besides: ui, flows: expectedFlows)
            let audits = try #require(result["axe"] as? [String: [String]], "\(said)")
            #expect(audits.count == expectedAudits, "\(audits.keys.sorted())")
            for (state, violations) in audits.sorted(by: { $0.key < $1.key }) {
                #expect(violations.isEmpty, "axe in \(state): \(violations)")
            }
        }
    }
}

extension WebUIBrowserTests {
    /// A browser driver's verdict: it exited cleanly (else its output and the server's end are shown), its last line
    /// is a JSON object whose `flows` are `expected` in number and all "ok". Returns that object and the output.
    static func driverResult(_ driver: PeerProcess, besides server: PeerProcess, flows expected: Int) async throws
        -> (result: [String: Any], said: String)
    {
        let passed = await driver.waitForExit()
        let said = driver.output
        #expect(passed, "\(said)\n--- server:\n\(server.output.suffix(3000))")
        let result = said.split(separator: "\n").last.flatMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        let flows = try #require(result?["flows"] as? [String: String], "\(said)")
        #expect(flows.count == expected, "\(flows.keys.sorted())")
        for (name, outcome) in flows.sorted(by: { $0.key < $1.key }) {
            #expect(outcome == "ok", "\(name): \(outcome)")
        }
        return (result ?? [:], said)
    }
}
