// The command line runs where processes and local servers exist (Linux, macOS). Building the whole package
// for iOS, tvOS, watchOS or visionOS compiles it to a stub, so products an app does not use still build.
#if os(Linux) || os(macOS)
    import ArgumentParser
    import Foundation
    import ModelDepot

    @main
    struct ModelDepotCommand: AsyncParsableCommand {
        /// `modeldepot --help` is the reference people read first: it opens with the commands most people need, one
        /// example each (short enough to wrap neither in 80 columns nor in a man page's 73), then lists the rest by
        /// what they are for. The man pages and shell completions (scripts/manual) are generated from this.
        static let configuration = CommandConfiguration(
            commandName: "modeldepot",
            abstract: "Get AI models onto this machine and keep them there.",
            discussion: """
                Most used:
                  modeldepot demo                           Pull a sample model, offline.
                  modeldepot pull qwen2.5-0.5b-instruct-q4  Download and verify a model.
                  modeldepot ls                             List the cached models.
                  modeldepot serve --cache --host 0.0.0.0   Serve the cache on the LAN.
                  modeldepot ui --open                      Open the app in a browser.

                See `modeldepot help <command>` for a command's options.
                """,
            version: ModelDepotRelease.version,
            groupedSubcommands: [
                CommandGroup(
                    name: "Downloading",
                    subcommands: [PullCommand.self, CatalogCommand.self, SearchCommand.self, DiscoverCommand.self]),
                CommandGroup(
                    name: "Cache",
                    subcommands: [
                        ListCommand.self, StatusCommand.self, InfoCommand.self, PathCommand.self, VerifyCommand.self,
                        BOMCommand.self,
                        RemoveCommand.self, PruneCommand.self, PinCommand.self,
                    ]),
                // Exact bytes elsewhere: a lock to reproduce, a bundle to carry offline, an OCI artifact to pull back.
                CommandGroup(
                    name: "Sharing",
                    subcommands: [LockCommand.self, ExportCommand.self, ImportCommand.self, PushCommand.self]),
                CommandGroup(name: "Serving", subcommands: [ServeCommand.self, UICommand.self]),
                CommandGroup(
                    name: "Inference", subcommands: [ChatCommand.self, EmbedCommand.self, TranscribeCommand.self]),
                CommandGroup(name: "Other", subcommands: [DemoCommand.self, EnvCommand.self]),
            ]
        )

        /// The one way out. Commands return or throw; here a thrown error becomes its message and exit code:
        /// the argument parser's own (usage errors, `ExitCode`, help) as it prints them, every other one through
        /// ``reportFailureAndExit(_:json:)``.
        ///
        /// `--help`, `-h` and `help <command>` parse into the argument parser's own help command, whose `run()`
        /// *throws* the help request for `exit(withError:)` to print; its errors therefore always go back to the
        /// parser (they once fell through to ``reportFailureAndExit(_:json:)``, which printed the request itself).
        static func main() async {
            let command: any ParsableCommand
            do {
                command = try parseAsRoot(
                    ServeSettings.expand(
                        Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment))
            } catch {
                exit(withError: error)
            }
            do {
                if var asynchronous = command as? any AsyncParsableCommand {
                    try await asynchronous.run()
                } else {
                    var synchronous = command
                    try synchronous.run()
                }
            } catch let error
                where error is ExitCode || error is CleanExit || error is ValidationError
                || isArgumentParserOwn(command)
            {
                exit(withError: error)
            } catch {
                reportFailureAndExit(error, json: (command as? any ReportsFailuresAsJSON)?.failuresAsJSON ?? false)
            }
        }
    }

    /// Whether `command` is one the argument parser adds by itself (`help`), not one of ours.
    private func isArgumentParserOwn(_ command: any ParsableCommand) -> Bool {
        String(reflecting: type(of: command)).hasPrefix("ArgumentParser.")
    }

    /// The flag that acts on a library error, when one does: chosen by the error's code and the remedy the library
    /// attached, never by its wording.
    func commandLineHint(for error: ModelDepotError) -> String? {
        switch error.remedy {
        case .provideToken?: return "on the command line: --token TOKEN"
        case .goOnline?: return "leave out --offline and unset HF_HUB_OFFLINE"
        case .changePatterns?: return "see --include and --exclude"
        case .fixEndpoint?: return "or --endpoint URL"
        case .downloadFirst?: return "`modeldepot ls` lists what is cached"
        case .chooseOutputPath?: return "--output PATH"
        default: break
        }
        switch error.code {
        case .repositoryNotFound, .gatedRepository: return "on the command line: --token TOKEN"
        case .insufficientDiskSpace:
            return
                "on the command line: `modeldepot prune` or `modeldepot rm` evicts; --cache-dir DIR uses another disk"
        default: return nil
        }
    }

    /// Flags shared by commands that show progress.
    struct OutputOptions: ParsableArguments {
        @Flag(help: "Print one JSON object per line (progress events, then the result) instead of a progress bar.")
        var json = false

        @Flag(name: .shortAndLong, help: "Print nothing but the result.")
        var quiet = false

        var renderer: ProgressRenderer {
            ProgressRenderer(mode: json ? .json : quiet ? .quiet : (isatty(STDERR_FILENO) == 1 ? .bar : .plain))
        }
    }

    /// A command that can print its results as JSON: its failures then also go to stdout as a JSON event.
    protocol ReportsFailuresAsJSON {
        var failuresAsJSON: Bool { get }
    }

    /// Prints `error: …` on stderr (and a JSON failure event on stdout for `--json`), with the flag that acts on
    /// it, and exits: 130 for a cancelled command, 1 otherwise.
    func reportFailureAndExit(_ error: any Error, json: Bool) -> Never {
        let failure = error as? ModelDepotError
        // The library says what to do in its own terms (variables, APIs); the flags that do it here are added here.
        let message = failure.map { $0.message + (commandLineHint(for: $0).map { " (\($0))" } ?? "") } ?? "\(error)"
        if json {
            ProgressRenderer(mode: .json).printJSON(
                JSONEvent(event: "failed", code: failure?.code.rawValue ?? "unknown", message: message))
        }
        StandardStreams.error(Data("error: \(message)\n".utf8))
        ExitCleanup.exit(failure?.code == .cancelled ? 130 : 1)
    }
#else
    @main
    enum ModelDepotCommand {
        static func main() {
            print("modeldepot runs on Linux and macOS.")
        }
    }
#endif
