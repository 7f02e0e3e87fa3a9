#if os(Linux) || os(macOS)
    import Foundation
    import ModelDepot
    import Synchronization
    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Darwin)
        import Darwin
    #endif

    /// A child process started with `posix_spawn`, with an empty signal mask and default signal handlers.
    ///
    /// Foundation's `Process` hands the child the spawning thread's signal mask, and Swift concurrency's worker
    /// threads block most signals: a server started from a task would ignore SIGTERM forever (measured:
    /// llama-cpp-python's server then only dies by SIGKILL, and outlives a killed parent).
    final class ChildProcess: Sendable {
        let pid: pid_t
        private let status = Mutex<Int32?>(nil)

        /// Starts `executable` with `arguments`; its stdout and stderr go to `log` (created or truncated), its
        /// stdin is /dev/null.
        init(executable: URL, arguments: [String], log: URL) throws {
            var actions = posix_spawn_file_actions_t()
            var attributes = posix_spawnattr_t()
            posix_spawn_file_actions_init(&actions)
            posix_spawnattr_init(&attributes)
            defer {
                posix_spawn_file_actions_destroy(&actions)
                posix_spawnattr_destroy(&attributes)
            }
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 1, log.path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
            var empty = sigset_t()
            sigemptyset(&empty)
            var defaults = sigset_t()
            sigemptyset(&defaults)
            for signalNumber in [SIGTERM, SIGINT, SIGHUP, SIGPIPE] { sigaddset(&defaults, signalNumber) }
            posix_spawnattr_setsigmask(&attributes, &empty)
            posix_spawnattr_setsigdefault(&attributes, &defaults)
            posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

            let argv = ([executable.path] + arguments).map { strdup($0) } + [nil]
            defer { argv.forEach { free($0) } }
            var child: pid_t = 0
            let result = posix_spawn(&child, executable.path, &actions, &attributes, argv, environ)
            guard result == 0 else {
                throw ModelDepotError(
                    .unavailable, "Cannot start \(executable.path): \(String(cString: strerror(result))).")
            }
            pid = child
        }

        /// The exit status once the process has ended (reaps it); nil while it runs.
        var exitStatus: Int32? {
            status.withLock { status in
                if status == nil {
                    var raw: Int32 = 0
                    if waitpid(pid, &raw, WNOHANG) == pid { status = raw }
                }
                return status
            }
        }

        var isRunning: Bool { exitStatus == nil }

        func signal(_ number: Int32) {
            if isRunning { kill(pid, number) }
        }

        /// Returns once the process has ended, checking every 20 ms.
        func waitForExit() async {
            while isRunning { try? await Task.sleep(for: .milliseconds(20)) }
        }
    }
#endif
