import Foundation
import ModelDepotPlatform
import ModelDepotTesting
import Testing

/// `scripts/check-runtimes` ends `scripts/test` on a developer's machine too: it may only ever flag (and kill) a
/// runtime ModelDepot started, never a process that merely has a runtime's name in its command line.
@Suite struct CheckRuntimesScriptTests {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("scripts/check-runtimes").path

    /// Runs the script and returns what it printed.
    static func runScript(in folder: URL) async throws -> String {
        let log = folder.appendingPathComponent("check-runtimes.log").path
        let check = try ChildProcess(executable: "/bin/bash", arguments: [script], output: log)
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
    #endif
}
