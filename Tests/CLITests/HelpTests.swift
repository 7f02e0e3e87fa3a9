import Foundation
import Testing

/// Help, version and completion scripts, from the built binary as a user runs them: every way of asking for
/// help on every command exits 0 with a usage line (they once all failed with the parser's help request
/// printed as an error).
@Suite struct HelpTests {
    /// Every subcommand the overview lists, group by group; the test fails when the overview and this list
    /// disagree, so a new command is covered as soon as it exists.
    static let commands = [
        "pull", "catalog", "search", "discover",
        "ls", "status", "info", "path", "verify", "bom", "rm", "prune", "pin",
        "lock", "export", "import", "push",
        "serve", "ui",
        "chat", "embed", "transcribe",
        "demo", "env",
    ]

    /// The groups the overview sorts the commands into, in order.
    static let groups = ["DOWNLOADING", "CACHE", "SHARING", "SERVING", "INFERENCE", "OTHER"]

    @Test func overviewListsEveryCommandAndExitsZero() async throws {
        for arguments in [["--help"], ["-h"], ["help"]] {
            let output = try await CLIRunner.run(arguments)
            #expect(output.status == 0, "modeldepot \(arguments): \(output.stderr)")
            #expect(output.stdout.contains("USAGE: modeldepot <subcommand>"), "\(output.stdout)")
            #expect(!output.stderr.contains("error"), "\(output.stderr)")
            let listed = Self.subcommands(inOverview: output.stdout)
            #expect(listed == Self.commands, "modeldepot \(arguments) lists \(listed)")
            let headings = output.stdout.split(separator: "\n").filter { $0.hasSuffix(" SUBCOMMANDS:") }
            #expect(headings == Self.groups.map { "\($0) SUBCOMMANDS:" }, "modeldepot \(arguments): \(headings)")
            // The overview opens with the commands most people need, before the usage line.
            let opening = output.stdout.components(separatedBy: "USAGE:")[0]
            for command in ["demo", "pull", "ls", "serve", "ui"] {
                #expect(opening.contains("\n  modeldepot \(command) "), "modeldepot \(arguments): \(opening)")
            }
            #expect(opening.contains("See `modeldepot help <command>` for a command's options."))
        }
    }

    @Test(arguments: commands) func everyCommandHasHelp(command: String) async throws {
        for arguments in [[command, "--help"], [command, "-h"], ["help", command]] {
            let output = try await CLIRunner.run(arguments)
            #expect(output.status == 0, "modeldepot \(arguments.joined(separator: " ")): \(output.stderr)")
            #expect(
                output.stdout.contains("USAGE: modeldepot \(command)"),
                "modeldepot \(arguments.joined(separator: " ")): \(output.stdout)\(output.stderr)")
        }
    }

    @Test func versionAndCompletionScript() async throws {
        let version = try await CLIRunner.run(["--version"])
        #expect(version.status == 0)
        #expect(version.stdout.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ".").count == 3)

        let completion = try await CLIRunner.run(["--generate-completion-script", "bash"])
        #expect(completion.status == 0, "\(completion.stderr)")
        #expect(completion.stdout.hasPrefix("#!/bin/bash"))
        #expect(completion.stdout.contains("pull"))
    }

    /// An empty --endpoint or --mirror is a script's unset variable: refused, never read as "the default" or "none"
    /// while the environment names another hub or mirror (where an explicit token would then go).
    @Test func emptyOrCommaJoinedHubFlagsAreUsageErrors() async throws {
        let environment = ["HF_ENDPOINT": "http://192.0.2.1:8080", "MODELDEPOT_MIRRORS": "http://192.0.2.2:8080"]
        for (arguments, message) in [
            (["info", "--endpoint", "", "--token", "hf_x", "acme/m"], "--endpoint needs a URL"),
            (["info", "--mirror", " ", "acme/m"], "--mirror needs a URL"),
            (["info", "--mirror", "http://a.example,http://b.example", "acme/m"], "repeat --mirror"),
        ] {
            let output = try await CLIRunner.run(arguments, environment: environment)
            #expect(output.status == 64, "\(arguments): \(output.stderr)")
            #expect(output.stderr.contains(message), "\(arguments): \(output.stderr)")
        }
    }

    @Test func unknownCommandIsAUsageError() async throws {
        let output = try await CLIRunner.run(["pul"])
        #expect(output.status == 64)
        #expect(output.stderr.contains("Usage: modeldepot <subcommand>") || output.stderr.contains("USAGE"))
    }

    /// The command names in the overview's SUBCOMMANDS sections (one per group, headings unindented), in order.
    static func subcommands(inOverview text: String) -> [String] {
        guard let section = text.range(of: "SUBCOMMANDS:\n") else { return [] }
        return text[section.upperBound...].split(separator: "\n").compactMap { line in
            // A command line is indented by exactly two spaces; wrapped abstracts are indented further.
            guard line.hasPrefix("  "), !line.hasPrefix("   "), let name = line.split(separator: " ").first,
                name != "See"
            else { return nil }
            return String(name)
        }
    }
}
