#if os(Linux) || os(macOS)
    #if canImport(Glibc)
        import CModelDepotPlatform
        import Glibc
    #elseif canImport(Musl)
        import CModelDepotPlatform
        import Musl
    #elseif canImport(Darwin)
        import Darwin
    #endif
    import Synchronization

    /// A child process with an empty signal mask, default signal handlers and a process group of its own, which on
    /// Linux ends with its parent. Only on Linux and macOS: iOS apps cannot spawn processes, and this compiles out
    /// there.
    ///
    /// Foundation's `Process` hands the child the spawning thread's signal mask, and Swift concurrency's worker
    /// threads block most signals: a server started from a task would ignore SIGTERM forever (measured:
    /// llama-cpp-python's server then only dies by SIGKILL, and outlives a killed parent).
    ///
    /// How it starts: on Linux by fork and exec in C (`CModelDepotPlatform`), because the parent-death signal
    /// (`PR_SET_PDEATHSIG`, SIGTERM) can only be set in the child between the two and `posix_spawn` has no attribute
    /// for it; the fork happens on one thread that never ends, since the kernel sends that signal when the forking
    /// thread ends. The alternatives were weighed: swift-subprocess 1.0.2 offers no parent-death signal; an exec
    /// shim (this binary re-run to call `prctl`, then `execv`) would still need C for the variadic `prctl`, and
    /// only works in executables that run the shim first (not in apps or test bundles). On macOS, which has no
    /// parent-death signal, `posix_spawn` with `POSIX_SPAWN_SETPGROUP`; runtimes there are reaped from their
    /// records instead (`RuntimeRecords` in ModelDepotInference).
    package final class ChildProcess: Sendable {
        package let pid: pid_t
        private let status = Mutex<Int32?>(nil)

        /// Starts `executable` with `arguments` and this process's environment; its stdout and stderr go to
        /// `output` (created or truncated; `/dev/null` to drop them), its stdin is `/dev/null`. It leads a process
        /// group of its own, so ``signalGroup(_:)`` reaches the programs it starts too.
        ///
        /// - Parameter diesWithParent: on Linux the child gets SIGTERM when this process ends, however it ends
        ///   (`kill -9` included), and is not started at all if this process is already ending. False for a
        ///   program meant to outlive ModelDepot (a browser). No effect on macOS.
        ///
        /// The environment is the C global `environ` on Linux; on macOS `_NSGetEnviron()` from `<crt_externs.h>`,
        /// as Apple's `environ(7)` advises for code outside the main executable; copied here, before the fork.
        ///
        /// - Parameter environment: variables set for the child on top of (replacing) this process's.
        package init(
            executable: String, arguments: [String], output: String, diesWithParent: Bool = true,
            environment: [String: String] = [:]
        ) throws {
            let argv = ([executable] + arguments).map { strdup($0) } + [nil]
            defer { argv.forEach { free($0) } }
            #if canImport(Darwin)
                let inherited = _NSGetEnviron().pointee
            #else
                let inherited = environ
            #endif
            let envp = Self.environment(inherited, adding: environment)
            defer { envp.forEach { free($0) } }
            var child: pid_t = 0
            #if canImport(Darwin)
                let result = Self.posixSpawn(&child, executable, argv, envp, output: output)
            #else
                let flags = MODELDEPOT_SPAWN_NEW_GROUP | (diesWithParent ? MODELDEPOT_SPAWN_DIES_WITH_PARENT : 0)
                let result = modeldepot_spawn(executable, argv, envp, output, flags, &child)
            #endif
            guard result == 0 else { throw SystemCallError("Cannot start \(executable)", code: result) }
            pid = child
        }

        /// `inherited` (a NULL-terminated `environ`) copied, less the names in `adding`, then `adding`: the copies
        /// are the caller's to free.
        private static func environment(
            _ inherited: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?, adding: [String: String]
        ) -> [UnsafeMutablePointer<CChar>?] {
            var entries: [UnsafeMutablePointer<CChar>?] = []
            var index = 0
            while let entry = inherited?[index] {
                index += 1
                let text = String(cString: entry)
                let name = text.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
                if adding[String(name)] == nil { entries.append(strdup(entry)) }
            }
            for (name, value) in adding.sorted(by: { $0.key < $1.key }) { entries.append(strdup("\(name)=\(value)")) }
            return entries + [nil]
        }

        #if canImport(Darwin)
            private static func posixSpawn(
                _ child: inout pid_t, _ executable: String, _ argv: [UnsafeMutablePointer<CChar>?],
                _ envp: [UnsafeMutablePointer<CChar>?], output: String
            ) -> Int32 {
                // Darwin's `posix_spawn_file_actions_t` and `posix_spawnattr_t` are opaque pointers that the
                // `_init` calls allocate (`<spawn.h>`).
                var actions: posix_spawn_file_actions_t? = nil
                var attributes: posix_spawnattr_t? = nil
                posix_spawn_file_actions_init(&actions)
                posix_spawnattr_init(&attributes)
                defer {
                    posix_spawn_file_actions_destroy(&actions)
                    posix_spawnattr_destroy(&attributes)
                }
                posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
                posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
                posix_spawn_file_actions_adddup2(&actions, 1, 2)
                var empty = sigset_t()
                sigemptyset(&empty)
                var defaults = sigset_t()
                sigemptyset(&defaults)
                for signalNumber in [SIGTERM, SIGINT, SIGHUP, SIGPIPE] { sigaddset(&defaults, signalNumber) }
                posix_spawnattr_setsigmask(&attributes, &empty)
                posix_spawnattr_setsigdefault(&attributes, &defaults)
                // Process group 0: the child's own pid (`posix_spawnattr_setpgroup(3)`).
                posix_spawnattr_setpgroup(&attributes, 0)
                // POSIX_SPAWN_CLOEXEC_DEFAULT (Apple's): every descriptor but the three set up above closes, so a
                // runtime or a browser never keeps one of ours (a listening socket, a lock).
                posix_spawnattr_setflags(
                    &attributes,
                    Int16(
                        POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP
                            | POSIX_SPAWN_CLOEXEC_DEFAULT))
                return posix_spawn(&child, executable, &actions, &attributes, argv, envp)
            }
        #endif

        /// The exit status once the process has ended (reaps it); nil while it runs.
        package var exitStatus: Int32? {
            status.withLock { status in
                if status == nil {
                    var raw: Int32 = 0
                    if waitpid(pid, &raw, WNOHANG) == pid { status = raw }
                }
                return status
            }
        }

        package var isRunning: Bool { exitStatus == nil }

        /// Whether it has ended, without reaping it: while unreaped its pid (and so its process group's id) cannot
        /// be given to another process, so the group can still be signalled safely.
        private var hasEnded: Bool {
            if status.withLock({ $0 }) != nil { return true }
            var info = siginfo_t()
            // `si_signo` stays 0 when no child changed state (`waitid(2)` with WNOHANG).
            return waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_signo != 0
        }

        /// True when it ended by `exit(0)`.
        package var succeeded: Bool {
            guard let raw = exitStatus else { return false }
            // WIFEXITED and WEXITSTATUS: the low 7 bits are the signal (0 for a normal exit), the next 8 the code.
            return raw & 0x7f == 0 && (raw >> 8) & 0xff == 0
        }

        /// Sends `number` to the process alone.
        package func signal(_ number: Int32) {
            // Checked and sent under the lock that reaping takes: the pid cannot be reaped (and reused) in between.
            status.withLock { status in
                if status == nil { kill(pid, number) }
            }
        }

        /// Sends `number` to its whole process group: the process and whatever it started that has not left it.
        package func signalGroup(_ number: Int32) {
            // A program that left its group (`setsid`) is still reached itself. Under the lock that reaping takes,
            // so the leader cannot be reaped, and its group id reused, between the check and the kill.
            status.withLock { status in
                if status == nil, kill(-pid, number) != 0 { kill(pid, number) }
            }
        }

        /// Stops it and everything in its group: SIGTERM, then SIGKILL after `grace` if it has not ended, and
        /// returns once it has ended and been reaped (or 5 s after the SIGKILL, for a process stuck in the kernel). Waits by checking every 20 ms with `Task.sleep`, so no thread
        /// is held meanwhile.
        package func stop(grace: Duration) async {
            signalGroup(SIGTERM)
            let deadline = ContinuousClock.now + grace
            while !hasEnded, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(20)) }
            finishStop()
            // SIGKILL cannot be ignored, but a process in uninterruptible sleep (a GPU driver call) ends only when
            // that call returns: the stop gives up waiting after a while rather than hang its caller's shutdown.
            let killed = ContinuousClock.now + .seconds(5)
            while isRunning, ContinuousClock.now < killed { try? await Task.sleep(for: .milliseconds(20)) }
        }

        /// ``stop(grace:)`` for a process about to exit (a signal handler, `exit`), which cannot suspend: blocks the
        /// calling thread for up to `grace` and 2 s more. Never call it on Swift's cooperative pool.
        package func stopBlocking(grace: Duration) {
            signalGroup(SIGTERM)
            let deadline = ContinuousClock.now + grace
            while !hasEnded, ContinuousClock.now < deadline { usleep(5_000) }
            finishStop()
            let killed = ContinuousClock.now + .seconds(2)
            while isRunning, ContinuousClock.now < killed { usleep(5_000) }
        }

        /// SIGKILL for the group while the leader is not yet reaped (its group id cannot have been reused): its
        /// own children may have stayed behind after it ended, or it did not end within the grace period.
        private func finishStop() {
            signalGroup(SIGKILL)
        }

        /// Returns once the process has ended, checking every 20 ms.
        package func waitForExit() async {
            while isRunning { try? await Task.sleep(for: .milliseconds(20)) }
        }

        /// Blocks the calling thread until the process has ended (for short checks that run off the
        /// cooperative pool).
        package func waitForExitBlocking() {
            while isRunning { usleep(5_000) }
        }
    }
#endif
