import Foundation
import ModelDepotPlatform

#if os(Linux) || os(macOS)

    /// A program a test runs beside itself (olah, a Python proxy, the CLI's servers, a browser driver), started with an empty signal mask so
    /// that it can be stopped: Foundation's `Process` hands a child the blocked signals of the task's thread, and
    /// such a child ignores SIGTERM (the first runs of these tests left servers behind and hung in
    /// `waitUntilExit`).
    public struct PeerProcess: Sendable {
        let child: ChildProcess
        /// Where its stdout and stderr go.
        public let log: URL

        /// Starts `executable` in `folder` with `environment` laid over this process's; stdout and stderr go to
        /// `log`.
        public init(
            _ executable: URL, _ arguments: [String], in folder: URL, environment: [String: String] = [:], log: URL
        )
            throws
        {
            // env(1) changes the folder (`-C`: coreutils on Linux, FreeBSD's env on macOS 14 and later) and the
            // variables, so the child starts as the caller asked.
            let settings = environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
            child = try ChildProcess(
                executable: "/usr/bin/env", arguments: ["-C", folder.path] + settings + [executable.path] + arguments,
                output: log.path)
            self.log = log
        }

        /// What the peer has written so far.
        public var output: String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }

        /// The first line the peer writes (a port, for the proxies), once written; nil if it exits or says nothing
        /// within `timeout`.
        public func firstLine(timeout: Duration = .seconds(30)) async -> String? {
            let written = await waitUntil(timeout: timeout) { output.contains("\n") || !child.isRunning }
            guard written, let line = output.split(separator: "\n").first else { return nil }
            return String(line)
        }

        /// Whether it still runs.
        public var isRunning: Bool { child.isRunning }

        /// The code it exited with (`exit(130)` gives 130); nil while it runs or when a signal ended it.
        public var exitCode: Int32? {
            guard let raw = child.exitStatus, raw & 0x7f == 0 else { return nil }
            return (raw >> 8) & 0xff
        }

        /// Waits for it to end by itself; true when it exited with status 0.
        public func waitForExit() async -> Bool {
            await child.waitForExit()
            return child.succeeded
        }

        /// Asks the peer to stop (SIGTERM) and waits until it has; true when it then exited with status 0.
        public func terminate() async -> Bool {
            child.signal(SIGTERM)
            await child.waitForExit()
            return child.succeeded
        }

        /// Sends `number` (SIGTERM, SIGINT…) without waiting for anything.
        public func send(_ number: Int32) { child.signal(number) }

        /// Stops the peer, and every process it started (its group: nginx's workers, squid's helpers), and reaps
        /// it. Killing the peer alone left nginx's workers running with no parent.
        public func stop() async {
            child.signalGroup(SIGKILL)
            await child.waitForExit()
        }

        /// Runs `body` with the peer running, and stops it afterwards whatever happens.
        public static func with<T>(
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
#endif
