import ArgumentParser
import Foundation
import ModelDepot
import ModelDepotTesting

struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Pull a generated sample model from an embedded local server (no network needed).",
        discussion: """
            Starts an HTTP server on 127.0.0.1 serving a generated file, makes it misbehave once (a connection \
            reset and a 503), and pulls the file with the transfer engine: parallel ranges, retries, SHA-256 \
            verification. The last line on stdout is the absolute path of the pulled file.
            """
    )

    @Option(help: "Size of the sample model in MiB.")
    var sizeMib: Int = 64

    @Option(name: .shortAndLong, help: "Where to save it (default: a new temporary folder).")
    var output: String?

    @OptionGroup var outputOptions: OutputOptions

    func validate() throws {
        guard (1...4096).contains(sizeMib) else { throw ValidationError("--size-mib must be between 1 and 4096.") }
    }

    func run() async throws {
        let renderer = outputOptions.renderer
        do {
            let bytes = SampleData.bytes(count: sizeMib << 20, seed: 2026)
            let expected = SampleData.sha256(bytes)
            let server = try await FaultServer.start(files: ["/models/demo-model.bin": bytes])
            server.inject(.status(503, headers: [("Retry-After", "0")]), times: 1, when: .laterRanges)
            server.inject(.reset(afterBytes: 300_000), times: 1, when: .laterRanges)
            let destination: URL
            if let output {
                destination = URL(fileURLWithPath: output).standardizedFileURL
            } else {
                destination = FileManager.default.temporaryDirectory
                    .appendingPathComponent("modeldepot-demo-\(UUID().uuidString.prefix(8))")
                    .appendingPathComponent("demo-model.bin")
            }
            if !outputOptions.quiet && !outputOptions.json {
                log("serving a \(sizeMib) MiB sample model at \(server.url("/models/demo-model.bin"))")
                log("the server will reset one connection and answer one request with 503")
            }
            var configuration = DownloadConfiguration()
            // Small segments so even a small sample exercises parallel ranges (and meets the injected faults).
            configuration.segmentSize = max(256 << 10, Int64(sizeMib << 20) / 16)
            let downloader = Downloader(configuration: configuration)
            let request = DownloadRequest(
                url: server.url("/models/demo-model.bin"), destination: destination, expectedSHA256: expected)
            let result: DownloadResult
            do {
                result = try await CancellableRun.run {
                    try await downloader.download(request) { renderer.render($0) }
                }
            } catch {
                try? await server.shutdown()
                throw error
            }
            try? await server.shutdown()
            if !outputOptions.quiet && !outputOptions.json {
                renderer.finishLine()
                log(
                    "verified SHA-256 \(result.sha256 ?? "-") over \(server.requests.count) requests (faults recovered: \(2 - server.pendingFaults))"
                )
            }
            renderer.finish(result)
        } catch {
            exitWithError(error, renderer: renderer)
        }
    }

    private func log(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}
