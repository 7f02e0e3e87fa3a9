import Foundation
import ModelDepotPlatform
import ModelDepotTesting
import Testing

/// `scripts/check-runtimes` ends `scripts/test` on a developer's machine too: it may only ever flag (and kill) a
/// runtime ModelDepot started, never a process that merely has a runtime's name in its command line.
@Suite struct CheckRuntimesScriptTests {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("scripts/check-runtimes").path

    /// Runs the script, which kills nothing with `--report-only` (other suites' runtimes run meanwhile), and
    /// returns what it printed.
    static func runScript(in folder: URL) async throws -> String {
        let log = folder.appendingPathComponent("check-runtimes.log").path
        let check = try ChildProcess(executable: "/bin/bash", arguments: [script, "--report-only"], output: log)
        await check.waitForExit()
        return try String(contentsOfFile: log, encoding: .utf8)
    }

    #if os(Linux)
        /// A person's own program whose command line mentions "whisper" (their notes, their own
        /// faster_whisper_server started by hand), started by a shell that is not ModelDepot: left alone.
        @Test(.timeLimit(.minutes(1))) func aProcessModelDepotDidNotStartIsNeverFlagged() async throws {
            // Not under a folder named after ModelDepot: the script spares children of anything so named.
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("hand-started-\(UUID())")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let pidFile = folder.appendingPathComponent("pid").path
            let notes = folder.appendingPathComponent("whisper-notes.sh")
            try "echo $$ > \(pidFile); sleep 600\n".write(to: notes, atomically: true, encoding: .utf8)
            let shell = folder.appendingPathComponent("shell.sh")
            try "/bin/sh \(notes.path); :\n".write(to: shell, atomically: true, encoding: .utf8)
            let person = try ChildProcess(executable: "/bin/sh", arguments: [shell.path], output: "/dev/null")
            defer { person.signalGroup(SIGKILL) }
            #expect(
                await waitUntil(timeout: .seconds(30)) {
                    (try? String(contentsOfFile: pidFile, encoding: .utf8))?.hasSuffix("\n") == true
                })
            let written = (try? String(contentsOfFile: pidFile, encoding: .utf8)) ?? ""
            let notesProcess = try #require(
                Int32(written.trimmingCharacters(in: .newlines)).flatMap(RunningProcess.find))
            #expect(notesProcess.parent == person.pid)

            let output = try await Self.runScript(in: folder)
            #expect(!output.contains("pid \(notesProcess.pid) "), "\(output)")
            #expect(notesProcess.isRunning, "check-runtimes killed a process ModelDepot never started")
            await person.stop(grace: .seconds(5))
        }

        /// A process carrying ModelDepot's runtime marker whose starter is gone is flagged; one whose starter is
        /// still among its ancestors is not.
        @Test(.timeLimit(.minutes(1))) func aMarkedRuntimeWhoseStarterIsGoneIsFlagged() async throws {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("marked-\(UUID())")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let pidFile = folder.appendingPathComponent("pid").path
            // The shell marks its child with its own id, then ends: the child is an orphan with a gone starter.
            let starter = try ChildProcess(
                executable: "/bin/sh",
                arguments: ["-c", "MODELDEPOT_RUNTIME_OF=$$ sleep 600 & echo $! > \(pidFile)"], output: "/dev/null")
            await starter.waitForExit()
            let written = (try? String(contentsOfFile: pidFile, encoding: .utf8)) ?? ""
            let orphan = try #require(Int32(written.trimmingCharacters(in: .newlines)).flatMap(RunningProcess.find))
            defer { if orphan.isRunning { kill(orphan.pid, SIGKILL) } }
            // A marked process whose starter (this test process) is its parent: in use.
            let inUse = try ChildProcess(
                executable: "/bin/sleep", arguments: ["600"], output: "/dev/null",
                environment: ["MODELDEPOT_RUNTIME_OF": "\(getpid())"])
            defer { inUse.signalGroup(SIGKILL) }

            let output = try await Self.runScript(in: folder)
            #expect(output.contains("left running: pid \(orphan.pid) "), "\(output)")
            #expect(!output.contains("pid \(inUse.pid) "), "\(output)")
            #expect(orphan.isRunning && inUse.isRunning, "--report-only kills nothing")
            kill(orphan.pid, SIGKILL)
            await inUse.stop(grace: .seconds(5))
        }
    #endif
}
