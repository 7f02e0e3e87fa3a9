import Foundation
import ModelDepotTesting

/// Runs the built `modeldepot` binary as a user would.
struct CLIRunner {
    struct Output {
        var status: Int32
        var stdout: String
        var stderr: String
        var lastLine: String? { stdout.split(separator: "\n").last.map(String.init) }
    }

    /// The binary in the build folder: beside the test bundle on Linux (argv[0] is the bundle); on macOS argv[0]
    /// is Xcode's or SwiftPM's test runner, so the package's own `.build/debug` (or `.build/release`) is looked at.
    static var executable: URL {
        let bundleFolder = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let candidates =
            [bundleFolder, bundleFolder.deletingLastPathComponent()]
            + ["debug", "release"].map { packageRoot.appendingPathComponent(".build/\($0)") }
        for folder in candidates {
            let candidate = folder.appendingPathComponent("modeldepot")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return bundleFolder.appendingPathComponent("modeldepot")
    }

    /// Starts the CLI; the caller waits with ``wait(_:)`` or kills it.
    /// `environment` adds to (or replaces) variables of the test's own environment.
    static func start(
        _ arguments: [String], in folder: URL? = nil, environment: [String: String] = [:], input: Pipe? = nil
    ) throws -> (Process, Pipe, Pipe) {
        try startProgram(executable, arguments) { process in
            if let folder { process.currentDirectoryURL = folder }
            if !environment.isEmpty {
                process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
            }
            if let input { process.standardInput = input }
        }
    }

    /// Starts another program the same way (a Python peer).
    static func startProgram(
        _ executable: URL, _ arguments: [String], configure: (Process) -> Void = { _ in }
    ) throws -> (Process, Pipe, Pipe) {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        configure(process)
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        return (process, out, err)
    }

    static func run(_ arguments: [String], in folder: URL? = nil, environment: [String: String] = [:]) async throws
        -> Output
    {
        let (process, out, err) = try start(arguments, in: folder, environment: environment)
        return await wait(process, out, err)
    }

    static func wait(_ process: Process, _ out: Pipe, _ err: Pipe) async -> Output {
        // Read both pipes while the process runs so a full pipe cannot block it. The blocking reads and the wait
        // run on Dispatch threads: on the cooperative pool (2 threads here) they would starve the other tests.
        async let stdout = blocking { out.fileHandleForReading.readDataToEndOfFile() }
        async let stderr = blocking { err.fileHandleForReading.readDataToEndOfFile() }
        let (outData, errData) = await (stdout, stderr)
        await blocking { process.waitUntilExit() }
        return Output(
            status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
            stderr: String(decoding: errData, as: UTF8.self))
    }

    /// What `pipe` delivered until `marker` first appeared in it (or it closed): a test waits for the program to
    /// reach a state it prints. Pass the rest to ``wait(_:_:_:)`` and prepend this to its stdout.
    static func read(_ pipe: Pipe, until marker: String) async -> String {
        await blocking {
            var collected = Data()
            while !String(decoding: collected, as: UTF8.self).contains(marker) {
                let chunk = pipe.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                collected += chunk
            }
            return String(decoding: collected, as: UTF8.self)
        }
    }

    static func blocking<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        // A thread of its own: Dispatch's global queues have as many threads as cores, and blocking them would
        // stall the servers under test (the mirror hashes files there).
        (try? await onOwnThread { work() })!
    }
}
