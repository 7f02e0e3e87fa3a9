import Foundation
import ModelDepotPlatform
import Testing

/// How children start and stop: tied to this process, in a group of their own, with clean signal settings; stopped
/// with their group; found again only by id and start time.
@Suite struct ChildProcessTests {
    let folder: URL

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("modeldepot-child-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    func remove() { try? FileManager.default.removeItem(at: folder) }

    /// Runs `arguments` to the end and returns what it printed.
    func output(
        of executable: String, _ arguments: [String], diesWithParent: Bool = true, environment: [String: String] = [:]
    ) async throws -> String {
        let log = folder.appendingPathComponent(UUID().uuidString).path
        let child = try ChildProcess(
            executable: executable, arguments: arguments, output: log, diesWithParent: diesWithParent,
            environment: environment)
        await child.waitForExit()
        return try String(contentsOfFile: log, encoding: .utf8)
    }

    /// Waits for `condition`, checking every 10 ms, for at most `timeout` (a safety net, not a sleep).
    func eventually(_ timeout: Duration = .seconds(30), _ condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return condition()
    }

    #if os(Linux)
        @Test func aChildGetsTheParentDeathSignalAGroupOfItsOwnAndCleanSignals() async throws {
            defer { remove() }
            // PR_GET_PDEATHSIG is 2; the answer is written through the pointer.
            let script = """
                import ctypes, os
                libc = ctypes.CDLL(None)
                signal = ctypes.c_int(-1)
                libc.prctl(2, ctypes.byref(signal), 0, 0, 0)
                print(signal.value, os.getpgid(0) == os.getpid())
                """
            #expect(try await output(of: "/usr/bin/python3", ["-c", script]) == "15 True\n")
            #expect(try await output(of: "/usr/bin/python3", ["-c", script], diesWithParent: false) == "0 True\n")
            // This process ignores SIGPIPE and its threads block signals; none of that may reach a child (`cat`
            // sets nothing itself).
            let status = try await output(of: "/bin/cat", ["/proc/self/status"])
            func mask(_ name: String) -> UInt64? {
                status.split(separator: "\n").first { $0.hasPrefix(name + ":") }
                    .flatMap { UInt64($0.split(separator: "\t").last ?? "", radix: 16) }
            }
            #expect(mask("SigBlk") == 0, "\(status)")
            // Signals 1-31; glibc keeps 32 and 33 for itself and refuses to change them (it sets its own handler
            // before it uses them).
            #expect(mask("SigIgn").map { $0 & 0x7fff_ffff } == 0, "\(status)")
        }
    #endif

    #if os(Linux)
        /// A descriptor this process opened without close-on-exec (a library's socket, a lock) must not reach a
        /// runtime, let alone a browser that outlives ModelDepot and would keep its port or lock.
        @Test func aChildInheritsNoDescriptorBeyondItsStandardThree() async throws {
            defer { remove() }
            let leaked = open("/dev/null", O_RDONLY)
            try #require(leaked > 2)
            defer { close(leaked) }
            let probe = "if [ -e /proc/self/fd/\(leaked) ]; then echo leaked; else echo clean; fi"
            #expect(try await output(of: "/bin/sh", ["-c", probe]) == "clean\n")
            #expect(try await output(of: "/bin/sh", ["-c", probe], diesWithParent: false) == "clean\n")
        }
    #endif

    @Test func theEnvironmentIsThisProcessesWithTheAdditionsOnTop() async throws {
        defer { remove() }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let printed = try await output(
            of: "/bin/sh", ["-c", "echo \"$MODELDEPOT_PROBE|$PATH\""], environment: ["MODELDEPOT_PROBE": "a=b c"])
        #expect(printed == "a=b c|\(path)\n")
        let replaced = try await output(of: "/bin/sh", ["-c", "echo \"$PATH\""], environment: ["PATH": "/nowhere"])
        #expect(replaced == "/nowhere\n")
    }

    @Test func aProgramThatCannotStartIsAnErrorNotAChild() throws {
        defer { remove() }
        #expect(throws: SystemCallError.self) {
            try ChildProcess(executable: "/nonexistent/program", arguments: [], output: "/dev/null")
        }
        let notExecutable = folder.appendingPathComponent("plain.txt").path
        _ = FileManager.default.createFile(atPath: notExecutable, contents: Data("x".utf8))
        #expect(throws: SystemCallError.self) {
            try ChildProcess(executable: notExecutable, arguments: [], output: "/dev/null")
        }
    }

    /// A child that ignores SIGTERM, with a child of its own (which inherits that): `stop` kills both after the
    /// grace period and returns once the child is reaped.
    @Test func stopEndsTheWholeGroupEvenWhenSIGTERMIsIgnored() async throws {
        defer { remove() }
        let pidFile = folder.appendingPathComponent("grandchild").path
        let child = try ChildProcess(
            executable: "/bin/sh", arguments: ["-c", "trap '' TERM; sleep 600 & echo $! > \(pidFile); wait"],
            output: "/dev/null")
        #expect(await eventually { (try? String(contentsOfFile: pidFile, encoding: .utf8))?.hasSuffix("\n") == true })
        let grandchild = try #require(
            Int32(try String(contentsOfFile: pidFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines))
                .flatMap(RunningProcess.find))
        #expect(grandchild.group == child.pid)
        let started = ContinuousClock.now
        await child.stop(grace: .milliseconds(300))
        #expect(ContinuousClock.now - started < .seconds(20))
        #expect(!child.isRunning)
        #expect(child.exitStatus.map { $0 & 0x7f } == SIGKILL, "SIGTERM was ignored: SIGKILL ended it")
        #expect(await eventually { !grandchild.isRunning }, "its own child went with it")
    }

    @Test func stopSendsSIGTERMFirst() async throws {
        defer { remove() }
        let child = try ChildProcess(executable: "/bin/sleep", arguments: ["600"], output: "/dev/null")
        await child.stop(grace: .seconds(60))
        #expect(child.exitStatus.map { $0 & 0x7f } == SIGTERM)
    }

    @Test func aProcessIsKnownByItsIdAndStartTime() async throws {
        defer { remove() }
        let me = try #require(RunningProcess.current)
        #expect(me.pid == getpid() && me.parent == getppid() && me.isRunning)
        let child = try ChildProcess(executable: "/bin/sleep", arguments: ["600"], output: "/dev/null")
        let found = try #require(RunningProcess.find(child.pid))
        #expect(found.parent == me.pid && found.group == child.pid && found.isRunning)
        // The same id with another start time is another process.
        let other = RunningProcess(
            pid: found.pid, parent: found.parent, group: found.group, startTime: found.startTime + 1, boot: found.boot)
        #expect(!other.isRunning)
        child.signal(SIGKILL)
        await child.waitForExit()
        #expect(RunningProcess.find(child.pid) == nil && !found.isRunning)
    }
}
