import Foundation
import ModelDepot
import ModelDepotTesting
import Testing

/// From download to use in Chromium (Tests/PythonPeers/use_driver.py), over `ui --demo` with the real runtimes
/// `scripts/test` installs: Use on the demo's sentence encoder, download → Use → chat through llama.cpp's server,
/// the Loaded models panel, a second load that keeps one runtime, a runtime killed under the app and loaded again,
/// Unload closing its port, download → Use → transcribe through faster-whisper-server, and a model too big for the
/// machine refused with its estimate. Screenshots go to `.build/ui-screenshots/use/`.
extension WebUIBrowserTests {
    @Test func fromDownloadToUseInChromium() async throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: Self.python.path)
                && FileManager.default.isExecutableFile(atPath: "/usr/bin/chromedriver") && PythonVenv.hasLlamaServer
                && WhisperVenv.isInstalled,
            "needs chromium, chromium-driver, .venv-browser, llama-cpp-python in .venv and .venv-whisper (scripts/test installs them)"
        )
        let folder = try TemporaryDirectory(prefix: "modeldepot-use-browser")
        defer { folder.remove() }
        let speech = try await WhisperVenv.speak("The juice of lemons makes fine punch.", into: folder)
        // From the package's folder: the demo offers tiny.en from ./.venv-whisper, and finds the runtimes there.
        try await PeerProcess.with(
            CLIRunner.executable, ["ui", "--demo", "--port", "0"], in: Self.packageRoot,
            environment: WhisperVenv.environment.merging(
                ["MODELDEPOT_PYTHON": PythonVenv.python.path, "HF_HOME": folder.path("home").path]
            ) { $1 },
            log: folder.path("ui.log")
        ) { ui in
            let started = await waitUntil(timeout: .seconds(60)) { ui.output.contains("ModelDepot is at") }
            try #require(started, "ui did not start: \(ui.output)")
            let launch = try #require(
                ui.output.split(separator: "\n").first { $0.hasPrefix("ModelDepot is at") }?.split(separator: " ")
                    .last.map(String.init))
            try await Self.drive(
                "use_driver.py", [launch], screenshots: "use",
                extra: [speech.appendingPathComponent("speech.m4a").path], in: folder, ui: ui, flows: 9,
                audits: 32)
        }
    }
}
