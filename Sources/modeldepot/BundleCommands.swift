import ArgumentParser
import Foundation
import ModelDepot

struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write the cached files a lock names, and the lock, into a folder to carry to another machine.",
        discussion: """
            Every file is checked against the lock first (a cache that differs is refused: run \
            `pull --locked` first). The folder holds modeldepot.lock and models/<org>/<name>/<path>; \
            `modeldepot import FOLDER` places it in another machine's cache, offline.
            """)

    @Option(help: "The lock file whose models to export.")
    var lock: String

    @Option(help: "A new or empty folder to write the bundle into.")
    var to: String

    @OptionGroup var hub: HubOptions

    func run() async throws {
        let lock = try ModelLock.load(URL(fileURLWithPath: self.lock))
        let models = ModelManager(cache: hub.cache, environment: hub.environment)
        let bytes = try models.export(lock: lock, to: URL(fileURLWithPath: to))
        let files = lock.repositories.reduce(0) { $0 + $1.files.count }
        print("exported \(counted(files, "file")) (\(ByteFormat.string(bytes))) to \(to)")
    }
}

struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Place a bundle's models in the cache, each file checked against the bundle's lock.",
        discussion: """
            The folder must hold exactly what its modeldepot.lock names: a missing or extra file, a link, or a \
            file whose bytes differ from the lock is refused, naming it. Files are verified as they are copied; \
            an interrupted import resumes, keeping what it placed. Python's huggingface_hub then finds the \
            models in the cache offline.
            """)

    @Argument(help: "The bundle folder `modeldepot export` wrote.")
    var bundle: String

    @OptionGroup var hub: HubOptions

    func run() async throws {
        let models = ModelManager(cache: hub.cache, environment: hub.environment)
        let lock = try models.importBundle(from: URL(fileURLWithPath: bundle))
        for repository in lock.repositories {
            print(
                "\(repository.repo) @ \(repository.commit.prefix(12)): \(counted(repository.files.count, "file")) verified and placed"
            )
            print(hub.cache.repository(repository.repo, type: repository.type).snapshotFolder(repository.commit).path)
        }
    }
}
