import ArgumentParser
import Foundation

/// Benchmark drivers that need the library from inside a process; not shipped with `modeldepot`.
@main
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "modeldepot-bench",
        abstract: "Measurements for bench/: run by the benchmark scripts, not by users.",
        subcommands: [
            BenchChatCommand.self, BenchEmbedCommand.self, BenchXetCommand.self, BenchBareServerCommand.self,
        ]
    )
}

/// One JSON document on stdout, keys sorted.
func printJSON(_ value: some Encodable) {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    guard let data = try? encoder.encode(value) else { return }
    FileHandle.standardOutput.write(data + Data("\n".utf8))
}

extension Duration {
    var milliseconds: Double {
        Double(components.seconds) * 1000 + Double(components.attoseconds) / 1e15
    }
}
