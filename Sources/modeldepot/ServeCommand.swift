import ArgumentParser
import Foundation
import Logging
import ModelDepotServer

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve model folders over the Hub's HTTP API, for any Hub client on the network.",
        discussion: """
            Every ROOT/<org>/<name>/ folder is a model repository with a branch 'main'. Point clients at it with \
            HF_ENDPOINT=http://HOST:PORT. Prints 'listening on URL' once ready; SIGINT/SIGTERM stop it.
            """
    )

    @Option(help: "The folder whose <org>/<name>/ sub-folders are served.")
    var root: String

    @Option(help: "The address to listen on.")
    var host: String = "127.0.0.1"

    @Option(help: "The port (0 picks a free one).")
    var port: Int = 8080

    func validate() throws {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: root, isDirectory: &isFolder), isFolder.boolValue else {
            throw ValidationError("--root \(root) is not a folder.")
        }
        guard (0...65535).contains(port) else { throw ValidationError("--port must be between 0 and 65535.") }
    }

    func run() async throws {
        LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }
        let server = MirrorServer(root: URL(fileURLWithPath: root).standardizedFileURL)
        try await server.run(host: host, port: port) { url in
            // Written straight to the descriptor so a parent process reading the pipe sees it at once.
            FileHandle.standardOutput.write(Data("listening on \(url.absoluteString)\n".utf8))
        }
    }
}
