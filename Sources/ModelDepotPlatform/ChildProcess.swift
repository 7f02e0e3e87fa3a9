#if os(Linux) || os(macOS)
    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Musl)
        import Musl
    #elseif canImport(Darwin)
        import Darwin
    #endif
    import Synchronization

    /// A child process started with `posix_spawn(3)`, with an empty signal mask and default signal handlers.
    /// Only on Linux and macOS: iOS apps cannot spawn processes, and this compiles out there.
    ///
    /// Foundation's `Process` hands the child the spawning thread's signal mask, and Swift concurrency's worker
    /// threads block most signals: a server started from a task would ignore SIGTERM forever (measured:
    /// llama-cpp-python's server then only dies by SIGKILL, and outlives a killed parent).
    package final class ChildProcess: Sendable {
        package let pid: pid_t
        private let status = Mutex<Int32?>(nil)

        /// Starts `executable` with `arguments` and this process's environment; its stdout and stderr go to
        /// `output` (created or truncated; `/dev/null` to drop them), its stdin is `/dev/null`.
        ///
        /// The environment is the C global `environ` on Linux; on macOS `_NSGetEnviron()` from `<crt_externs.h>`,
        /// as Apple's `environ(7)` advises for code outside the main executable.
        package init(executable: String, arguments: [String], output: String) throws {
            #if canImport(Darwin)
                // Darwin's `posix_spawn_file_actions_t` and `posix_spawnattr_t` are opaque pointers that the
                // `_init` calls allocate (`<spawn.h>`).
                var actions: posix_spawn_file_actions_t? = nil
                var attributes: posix_spawnattr_t? = nil
            #else
                var actions = posix_spawn_file_actions_t()
                var attributes = posix_spawnattr_t()
            #endif
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
            posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

            let argv = ([executable] + arguments).map { strdup($0) } + [nil]
            defer { argv.forEach { free($0) } }
            #if canImport(Darwin)
                let environment = _NSGetEnviron().pointee
            #else
                let environment = environ
            #endif
            var child: pid_t = 0
            let result = posix_spawn(&child, executable, &actions, &attributes, argv, environment)
            guard result == 0 else { throw SystemCallError("Cannot start \(executable)", code: result) }
            pid = child
        }

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

        /// True when it ended by `exit(0)`.
        package var succeeded: Bool {
            guard let raw = exitStatus else { return false }
            // WIFEXITED and WEXITSTATUS: the low 7 bits are the signal (0 for a normal exit), the next 8 the code.
            return raw & 0x7f == 0 && (raw >> 8) & 0xff == 0
        }

        package func signal(_ number: Int32) {
            if isRunning { kill(pid, number) }
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
