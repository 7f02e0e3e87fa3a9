#if os(Linux) || os(macOS)
    import Foundation

    /// Writes to stdout and stderr that a reader going away cannot crash. Foundation's `FileHandle.write(_:)` traps
    /// on a closed pipe, so `modeldepot pull --json | head -1` would end in a crash report once `head` exits; here
    /// a closed stdout ends the command quietly, with the status a shell gives a process a broken pipe ended
    /// (141), as curl and most tools stop. Partial downloads are kept, as on any interruption.
    enum StandardStreams {
        static func output(_ data: Data) {
            do {
                try FileHandle.standardOutput.write(contentsOf: data)
            } catch {
                ExitCleanup.exit(141)
            }
        }

        /// Errors and progress: when nobody reads stderr either, there is nobody to tell.
        static func error(_ data: Data) {
            try? FileHandle.standardError.write(contentsOf: data)
        }
    }
#endif
