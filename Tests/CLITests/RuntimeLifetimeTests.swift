import Foundation
import ModelDepot
import ModelDepotInference
import ModelDepotPlatform
import ModelDepotTesting
import Testing

/// Issue 51: a front end killed with `kill -9` leaves no local runtime behind (the parent-death signal), and what
/// that signal cannot reach is stopped by the next front end that starts a runtime (the records).
@Suite(.enabled(if: PythonVenv.hasLlamaServer, "llama-cpp-python is not in ./.venv (scripts/test installs it)"))
struct RuntimeLifetimeTests {
    /// The runtime a front end recorded in the cache `cache` (`--cache-dir`), once there is one running.
    static func recordedRuntime(cache: URL, timeout: Duration = .seconds(120)) async -> RunningProcess? {
        _ = await waitUntil(timeout: timeout) { runningRecordedRuntime(cache: cache) != nil }
        return runningRecordedRuntime(cache: cache)
    }

    static func runningRecordedRuntime(cache: URL) -> RunningProcess? {
        let records = RuntimeRecords(cache: HubCache(root: cache))
        for record in records.records() {
            if let process = RunningProcess.find(record.pid), process.startTime == record.startTime { return process }
        }
        return nil
    }

    /// Kills `frontEnd` with SIGKILL and returns how long `runtime` then took to end; nil if it still ran after
    /// `timeout`.
    static func killAndTime(_ frontEnd: pid_t, runtime: RunningProcess, timeout: Duration = .seconds(10)) async
        -> Duration?
    {
        #expect(runtime.isRunning, "the runtime runs when its front end is killed")
        let killed = ContinuousClock.now
        kill(frontEnd, SIGKILL)
        let gone = await waitUntil(timeout: timeout) { !runtime.isRunning }
        let elapsed = ContinuousClock.now - killed
        if !gone { runtime.signal(SIGKILL) }  // leave the machine clean; the test has failed
        return gone ? elapsed : nil
    }

    @Test(.timeLimit(.minutes(4))) func chatLocalKilledLeavesNoRuntimeAndTheNextReapsAnOrphan() async throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-lifetime-chat")
        defer { folder.remove() }
        let common = try await ChatLocalModelTests.pullTinyChat(into: folder)
        let environment = ["MODELDEPOT_PYTHON": PythonVenv.python.path]
        let input = Pipe()
        let (chat, _, err) = try CLIRunner.start(
            ["chat", "--local", "tiny-chat"] + common, environment: environment, input: input)
        let ready = await CLIRunner.read(err, until: "Chatting with")
        try #require(ready.contains("Chatting with"), "\(ready)")
        let runtime = try #require(await Self.recordedRuntime(cache: folder.path("cache")))
        #expect(runtime.parent == chat.processIdentifier)
        let elapsed = await Self.killAndTime(chat.processIdentifier, runtime: runtime)
        #expect(elapsed != nil, "llama_cpp.server \(runtime.pid) outlived a killed chat --local")
        print("chat --local: runtime gone \(elapsed.map { "\($0)" } ?? "never") after kill -9")
        await CLIRunner.blocking { chat.waitUntilExit() }

        // What the parent-death signal cannot reach: a process whose recorded parent was killed but which was not
        // that parent's own child. The next front end that starts a runtime stops it.
        let records = RuntimeRecords(cache: HubCache(root: folder.path("cache")))
        let standIn = try await StandInOrphan.start(in: folder.url)
        let (parent, orphan, parentNow) = (standIn.parent, standIn.orphan, standIn.parentNow)
        try records.write(
            .init(
                pid: orphan.pid, port: 9, startTime: orphan.startTime, parentPID: parentNow.pid,
                parentStartTime: parentNow.startTime, boot: orphan.boot, runtime: "stand-in"))
        parent.signal(SIGKILL)
        await parent.waitForExit()
        defer { if orphan.isRunning { orphan.signal(SIGKILL) } }
        #expect(orphan.isRunning)
        let next = try await CLIRunner.run(
            ["chat", "--local", "tiny-chat", "--prompt", "hi", "--max-tokens", "2"] + common,
            environment: environment)
        #expect(next.status == 0, "\(next.stderr)")
        #expect(!orphan.isRunning, "the next chat --local stopped the orphan")
        #expect(records.records().isEmpty, "the orphan's record, the killed chat's and the finished one's are gone")
    }

    @Test(.timeLimit(.minutes(4))) func uiWithAChatModelKilledLeavesNoRuntime() async throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-lifetime-ui")
        defer { folder.remove() }
        let common = try await ChatLocalModelTests.pullTinyChat(into: folder)
        try await PeerProcess.with(
            CLIRunner.executable, ["ui", "--port", "0", "--offline", "--chat-local", "tiny-chat"] + common,
            in: folder.url,
            environment: ["MODELDEPOT_PYTHON": PythonVenv.python.path, "HF_HOME": folder.path("home").path],
            log: folder.path("ui.log")
        ) { ui in
            let started = await waitUntil(timeout: .seconds(120)) { ui.output.contains("ModelDepot is at") }
            try #require(started, "\(ui.output)")
            let runtime = try #require(await Self.recordedRuntime(cache: folder.path("cache")))
            let elapsed = await Self.killAndTime(runtime.parent, runtime: runtime)
            #expect(elapsed != nil, "llama_cpp.server \(runtime.pid) outlived a killed ui")
            print("ui --chat-local: runtime gone \(elapsed.map { "\($0)" } ?? "never") after kill -9")
        }
    }

    @Test(
        .timeLimit(.minutes(4)),
        .enabled(
            if: WhisperVenv.isInstalled, "faster-whisper-server or espeak-ng is missing (scripts/test installs them)"))
    func transcribeLocalKilledLeavesNoRuntime() async throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-lifetime-transcribe")
        defer { folder.remove() }
        let cache = try await WhisperVenv.pullTinyEn(into: folder)
        let speech = try await WhisperVenv.speak("The juice of lemons makes fine punch.", into: folder)
        try await PeerProcess.with(
            CLIRunner.executable,
            ["transcribe", "--local", "whisper-tiny-en-ct2", speech.appendingPathComponent("speech.wav").path]
                + cache, in: folder.url, environment: WhisperVenv.environment, log: folder.path("transcribe.log")
        ) { transcribe in
            // Killed while its server starts (loading the model): the transcription itself takes a moment only.
            let runtime = try #require(await Self.recordedRuntime(cache: folder.path("cache")), "\(transcribe.output)")
            let elapsed = await Self.killAndTime(runtime.parent, runtime: runtime)
            #expect(elapsed != nil, "faster_whisper_server \(runtime.pid) outlived a killed transcribe --local")
            print("transcribe --local: runtime gone \(elapsed.map { "\($0)" } ?? "never") after kill -9")
        }
    }
}
