import ArgumentParser
import Foundation
import ModelDepot

struct PathCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "path",
        abstract: "Print the cached snapshot folder of a repository, or one of its files. No network.")

    @Argument(help: "The repository id (org/name).")
    var repo: String

    @Argument(help: "A file inside the repository.")
    var file: String?

    @Option(help: "The branch, tag or commit (default: main).")
    var revision: String = "main"

    @OptionGroup var cacheOptions: CacheOptions

    func run() throws {
        do {
            let repository = try cacheOptions.repository(repo)
            guard let commit = repository.commit(forRevision: revision),
                CacheScannerAccess.exists(repository.snapshotFolder(commit).path)
            else {
                throw ModelDepotError(
                    .notCached, "\(repo) at '\(revision)' is not cached. Run `modeldepot pull \(repo)` first.")
            }
            guard let file else {
                print(repository.snapshotFolder(commit).path)
                return
            }
            let path = try RepoFilePath(file)
            guard repository.hasFile(path, commit: commit) else {
                let known = repository.isKnownMissing(path, commit: commit) ? " (the Hub said it does not exist)" : ""
                throw ModelDepotError(
                    .notCached,
                    "\(file) of \(repo) at '\(revision)' is not cached\(known). Run `modeldepot pull \(repo) --include '\(file)'`."
                )
            }
            print(repository.snapshotFile(commit, path).path)
        } catch {
            exitWithError(error, json: false)
        }
    }
}
