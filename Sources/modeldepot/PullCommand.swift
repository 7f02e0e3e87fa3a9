import ArgumentParser
import Foundation
import ModelDepot

struct PullCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pull",
        abstract: "Download a file from a URL, in parallel ranges, resumable and verified.",
        discussion: """
            The last line on stdout is the absolute path of the finished file. Partial data is kept in \
            <output>.incomplete; running the same command again resumes it.
            """
    )

    @Argument(help: "An http:// or https:// URL.")
    var url: String

    @Option(name: .shortAndLong, help: "Where to save the file (default: the URL's file name in the current folder).")
    var output: String?

    @Option(help: "The SHA-256 the file must have (64 hex characters).")
    var sha256: String?

    @Option(help: "The most connections to use at once (1-64); fewer are used while more do not add speed.")
    var connections: Int = 16

    @Flag(help: "Flush the file to disk before moving it into place (survives power loss; slower).")
    var fsync = false

    @OptionGroup var outputOptions: OutputOptions

    func validate() throws {
        guard (1...64).contains(connections) else {
            throw ValidationError("--connections must be between 1 and 64 (got \(connections)).")
        }
    }

    func run() async throws {
        let renderer = outputOptions.renderer
        do {
            guard let source = URL(string: url), source.scheme != nil else {
                throw ModelDepotError(.invalidURL, "'\(url)' is not a URL; give a full http:// or https:// URL.")
            }
            let destination = try Self.destination(for: source, output: output)
            var configuration = DownloadConfiguration()
            configuration.maxConnections = connections
            configuration.initialConnections = min(configuration.initialConnections, connections)
            configuration.syncBeforeRename = fsync
            let downloader = Downloader(configuration: configuration)
            let request = DownloadRequest(url: source, destination: destination, expectedSHA256: sha256)
            let result = try await CancellableRun.run {
                try await downloader.download(request) { renderer.render($0) }
            }
            renderer.finish(result)
        } catch {
            exitWithError(error, renderer: renderer)
        }
    }

    static func destination(for url: URL, output: String?) throws -> URL {
        let cwd = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
        if let output {
            let path = URL(fileURLWithPath: output, relativeTo: cwd).standardizedFileURL
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(atPath: path.path, isDirectory: &isFolder), isFolder.boolValue {
                return path.appendingPathComponent(try fileName(of: url))
            }
            return path
        }
        return cwd.appendingPathComponent(try fileName(of: url)).standardizedFileURL
    }

    /// The last path component of the URL, refused when it could name something other than a plain file.
    static func fileName(of url: URL) throws -> String {
        let name = url.lastPathComponent
        guard !name.isEmpty, name != "/", name != ".", name != "..", !name.hasPrefix("."),
            !name.contains(where: { $0.isNewline || $0 == "\0" })
        else {
            throw ModelDepotError(
                .invalidArgument, "Cannot name the file after \(url.absoluteString); pass --output PATH.")
        }
        return name
    }
}
