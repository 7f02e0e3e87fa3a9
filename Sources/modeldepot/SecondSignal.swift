#if os(Linux) || os(macOS)
    import UnixSignals

    /// A second Ctrl-C (SIGINT) or SIGTERM while `ui` or `serve` drains ends the process at once, after stopping the
    /// child processes it started: the person asked twice, or a service manager insists.
    enum SecondSignal {
        /// Starts watching; the first signal is left to the server's graceful stop.
        static func exitsAtOnce() {
            Task.detached {
                var seen = 0
                for await signal in await UnixSignalsSequence(trapping: .sigint, .sigterm) {
                    seen += 1
                    guard seen >= 2 else { continue }
                    printStatus("\(signal) again: exiting now, without waiting for the drain")
                    ExitCleanup.exit(130)
                }
            }
        }
    }
#endif
