import Foundation
import ModelDepotPlatform
import ModelDepotTesting
import Testing

/// A third-party server a test runs beside ours (olah, a Python proxy), started with an empty signal mask so
/// that it can be stopped: Foundation's `Process` hands a child the blocked signals of the task's thread, and
/// such a child ignores SIGTERM (the first runs of these tests left servers behind and hung in
/// `waitUntilExit`).
struct PeerProcess: Sendable {
    let child: ChildProcess
    let log: URL

    /// Starts `executable` in `folder` with `environment` laid over this process's; stdout and stderr go to
    /// `log`.
    init(_ executable: URL, _ arguments: [String], in folder: URL, environment: [String: String] = [:], log: URL)
        throws
    {
        // coreutils' env(1) changes the folder and the variables, so the child starts as the caller asked.
        let settings = environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        child = try ChildProcess(
            executable: "/usr/bin/env", arguments: ["-C", folder.path] + settings + [executable.path] + arguments,
            output: log.path)
        self.log = log
    }

    /// What the peer has written so far.
    var output: String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }

    /// The first line the peer writes (a port, for the proxies), once written; nil if it exits or says nothing
    /// within `timeout`.
    func firstLine(timeout: Duration = .seconds(30)) async -> String? {
        let written = await waitUntil(timeout: timeout) { output.contains("\n") || !child.isRunning }
        guard written, let line = output.split(separator: "\n").first else { return nil }
        return String(line)
    }

    /// Stops the peer and reaps it.
    func stop() async {
        child.signal(SIGKILL)
        await child.waitForExit()
    }

    /// Runs `body` with the peer running, and stops it afterwards whatever happens.
    static func with<T>(
        _ executable: URL, _ arguments: [String], in folder: URL, environment: [String: String] = [:], log: URL,
        _ body: (PeerProcess) async throws -> T
    ) async throws -> T {
        let peer = try PeerProcess(executable, arguments, in: folder, environment: environment, log: log)
        do {
            let result = try await body(peer)
            await peer.stop()
            return result
        } catch {
            await peer.stop()
            throw error
        }
    }
}
